"""depthnotes: the support package of the book *Depth Notes*.

The core (config, params, init, model) needs only the standard library and PyTorch; plotting
and widgets live in their own modules and are imported only by the notebooks.
"""

from .config import GPT2_FAMILY, PRESETS, DeepNormConstants, ModelConfig, deepnorm_constants
from .model import Transformer
from .params import ParamCount, count_params

__all__ = [
    "ModelConfig", "PRESETS", "GPT2_FAMILY", "Transformer", "count_params", "ParamCount",
    "deepnorm_constants", "DeepNormConstants",
]
__version__ = "0.1.0"
