"""The Tensor's methods, one family per module, each a mixin class that tensor.py's Tensor
derives from (as tinygrad groups its Tensor's surface): arithmetic.py, reductions.py,
shape.py, indexing.py, inplace.py, dtype.py, neural.py, linalg.py; common.py holds what they share."""
