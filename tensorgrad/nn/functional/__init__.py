"""tensorgrad.nn.functional (imported as F): the neural-net ops as functions, with PyTorch's names and
signatures.  Each is wired to one op in tensorgrad/ops/; the functions live by family, one file each:
activations.py, linear.py, attention.py, dropout.py, normalization.py, embedding.py, losses.py,
distance.py, padding.py, conv.py, pooling.py and vision.py."""

from __future__ import annotations

from ...functions import one_hot
from .activations import (
    celu,
    elu,
    gelu,
    glu,
    hardshrink,
    hardsigmoid,
    hardswish,
    hardtanh,
    leaky_relu,
    log_softmax,
    logsigmoid,
    mish,
    prelu,
    relu,
    relu6,
    rrelu,
    selu,
    sigmoid,
    silu,
    softmax,
    softmin,
    softplus,
    softshrink,
    softsign,
    tanh,
    tanhshrink,
    threshold,
)
from .attention import packed_self_attention, scaled_dot_product_attention
from .conv import conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d, unfold
from .distance import cosine_similarity, pairwise_distance, pdist
from .dropout import alpha_dropout, dropout, dropout1d, dropout2d, dropout3d, feature_alpha_dropout
from .embedding import embedding, embedding_bag
from .linear import bilinear, linear
from .losses import (
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    cosine_embedding_loss,
    cross_entropy,
    gaussian_nll_loss,
    hinge_embedding_loss,
    huber_loss,
    kl_div,
    l1_loss,
    margin_ranking_loss,
    mse_loss,
    multi_margin_loss,
    multilabel_margin_loss,
    multilabel_soft_margin_loss,
    nll_loss,
    poisson_nll_loss,
    smooth_l1_loss,
    soft_margin_loss,
    triplet_margin_loss,
)
from .normalization import (
    batch_norm,
    group_norm,
    instance_norm,
    layer_norm,
    local_response_norm,
    normalize,
    rms_norm,
)
from .padding import pad
from .pooling import (
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_avg_pool3d,
    adaptive_max_pool1d,
    adaptive_max_pool2d,
    adaptive_max_pool3d,
    avg_pool1d,
    avg_pool2d,
    avg_pool3d,
    max_pool1d,
    max_pool2d,
    max_pool3d,
    max_unpool1d,
    max_unpool2d,
)
from .vision import (
    channel_shuffle,
    interpolate,
    pixel_shuffle,
    pixel_unshuffle,
    upsample,
    upsample_bilinear,
    upsample_nearest,
)

__all__ = [
    "one_hot",
    # activations.py
    "softmax", "log_softmax", "relu", "gelu", "sigmoid", "tanh", "silu", "mish", "softsign", "softplus",
    "hardtanh", "relu6", "hardsigmoid", "elu", "celu", "leaky_relu", "selu", "logsigmoid", "hardswish", "hardshrink",
    "softshrink", "tanhshrink", "threshold", "softmin", "glu", "prelu", "rrelu",
    # linear.py
    "linear", "bilinear",
    # attention.py
    "scaled_dot_product_attention", "packed_self_attention",
    # dropout.py
    "dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout",
    # normalization.py
    "layer_norm", "normalize", "batch_norm", "instance_norm", "group_norm", "rms_norm", "local_response_norm",
    # embedding.py
    "embedding", "embedding_bag",
    # losses.py
    "cross_entropy", "nll_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits", "mse_loss", "l1_loss",
    "kl_div", "huber_loss", "smooth_l1_loss", "soft_margin_loss", "margin_ranking_loss", "hinge_embedding_loss",
    "cosine_embedding_loss", "poisson_nll_loss", "gaussian_nll_loss", "triplet_margin_loss",
    "multilabel_soft_margin_loss", "multi_margin_loss", "multilabel_margin_loss",
    # distance.py
    "cosine_similarity", "pairwise_distance", "pdist",
    # padding.py
    "pad",
    # conv.py
    "conv2d", "conv1d", "conv_transpose2d", "conv_transpose1d", "unfold", "conv3d",
    # pooling.py
    "max_pool2d", "avg_pool2d", "max_pool1d", "avg_pool1d", "adaptive_avg_pool1d", "adaptive_avg_pool2d",
    "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_avg_pool3d", "max_unpool1d", "max_unpool2d",
    "adaptive_max_pool3d", "max_pool3d", "avg_pool3d",
    # vision.py
    "pixel_shuffle", "pixel_unshuffle", "channel_shuffle", "interpolate", "upsample", "upsample_nearest",
    "upsample_bilinear",
]  # fmt: skip
