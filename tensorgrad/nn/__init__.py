"""tensorgrad.nn: the layer library, with torch.nn's names, signatures and state_dict keys."""

# parallel: reachable as tg.nn.parallel after `import tensorgrad`, as torch.nn.parallel is
from . import functional, init, parallel, utils  # noqa: F401
from .activation import (
    CELU,
    ELU,
    GELU,
    GLU,
    SELU,
    Hardshrink,
    Hardsigmoid,
    Hardswish,
    Hardtanh,
    LeakyReLU,
    LogSigmoid,
    Mish,
    PReLU,
    ReLU,
    ReLU6,
    Sigmoid,
    SiLU,
    Softmin,
    Softplus,
    Softshrink,
    Softsign,
    Tanh,
    Tanhshrink,
    Threshold,
)
from .containers import ModuleDict, ModuleList, Sequential
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, Unfold
from .distance import CosineSimilarity, PairwiseDistance
from .dropout import AlphaDropout, Dropout, Dropout1d, Dropout2d, Dropout3d, FeatureAlphaDropout
from .embedding import Embedding, EmbeddingBag
from .linear import Bilinear, Linear
from .loss import (
    BCELoss,
    BCEWithLogitsLoss,
    CosineEmbeddingLoss,
    CrossEntropyLoss,
    GaussianNLLLoss,
    HingeEmbeddingLoss,
    HuberLoss,
    KLDivLoss,
    L1Loss,
    MarginRankingLoss,
    MSELoss,
    MultiLabelMarginLoss,
    MultiLabelSoftMarginLoss,
    MultiMarginLoss,
    NLLLoss,
    PoissonNLLLoss,
    SmoothL1Loss,
    SoftMarginLoss,
    TripletMarginLoss,
)
from .module import Module
from .normalization import (
    BatchNorm1d,
    BatchNorm2d,
    BatchNorm3d,
    GroupNorm,
    InstanceNorm1d,
    InstanceNorm2d,
    InstanceNorm3d,
    LayerNorm,
    LocalResponseNorm,
    RMSNorm,
)
from .parameter import Parameter
from .pooling import (
    AdaptiveAvgPool1d,
    AdaptiveAvgPool2d,
    AdaptiveAvgPool3d,
    AdaptiveMaxPool1d,
    AdaptiveMaxPool2d,
    AdaptiveMaxPool3d,
    AvgPool1d,
    AvgPool2d,
    AvgPool3d,
    MaxPool1d,
    MaxPool2d,
    MaxPool3d,
    MaxUnpool1d,
    MaxUnpool2d,
)
from .vision import ChannelShuffle, PixelShuffle, PixelUnshuffle, Upsample, UpsamplingBilinear2d, UpsamplingNearest2d

__all__ = [
    "GELU", "Dropout", "Embedding", "LayerNorm", "Linear", "Module", "ModuleDict", "ModuleList", "Parameter",
    "ReLU", "Sequential", "functional", "init", "utils",
]  # fmt: skip
__all__ += ["AvgPool2d", "Conv1d", "Conv2d", "ConvTranspose2d", "MaxPool2d"]
__all__ += ["BCELoss", "BCEWithLogitsLoss", "CrossEntropyLoss", "L1Loss", "MSELoss", "NLLLoss"]
__all__ += [
    "CosineEmbeddingLoss", "GaussianNLLLoss", "HingeEmbeddingLoss", "HuberLoss", "KLDivLoss", "MarginRankingLoss",
    "MultiLabelSoftMarginLoss", "PoissonNLLLoss", "SmoothL1Loss", "SoftMarginLoss", "TripletMarginLoss",
    "CosineSimilarity", "PairwiseDistance",
    "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "GroupNorm", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d",
    "LocalResponseNorm", "RMSNorm", "ChannelShuffle", "PixelShuffle", "PixelUnshuffle",
    "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AvgPool1d", "MaxPool1d",
    "ConvTranspose1d", "Unfold", "Upsample", "UpsamplingBilinear2d", "UpsamplingNearest2d", "Bilinear",
    "MultiMarginLoss", "MultiLabelMarginLoss", "AdaptiveAvgPool3d", "MaxUnpool1d", "MaxUnpool2d", "Conv3d",
    "AdaptiveMaxPool3d", "AvgPool3d", "MaxPool3d", "EmbeddingBag",
    "AlphaDropout", "Dropout1d", "Dropout2d", "Dropout3d", "FeatureAlphaDropout",
]  # fmt: skip
__all__ += [
    "CELU", "ELU", "Hardsigmoid", "Hardtanh", "LeakyReLU", "Mish", "ReLU6", "Sigmoid", "SiLU", "Softplus", "Softsign",
    "Tanh",
]  # fmt: skip
__all__ += [
    "GLU", "SELU", "Hardshrink", "Hardswish", "LogSigmoid", "PReLU", "Softmin", "Softshrink", "Tanhshrink", "Threshold",
]  # fmt: skip
