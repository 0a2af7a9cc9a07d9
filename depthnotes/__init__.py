"""depthnotes: the support package of the book *Depth Notes*.

The package is laid out in layers, each a folder, and imports flow one way, from the top of
this list to the bottom (``tests/test_imports.py`` checks it):

* ``tools``, ``cli``: the book's build and the reader's shell commands;
* ``course``: exercise kinds, the check a cell calls, what each exercise expects;
* ``page``: figures, widgets, the numbers a notebook hands to its prose (the only users of
  matplotlib, ipywidgets and myst-nb);
* ``verdicts``: the rules that judge each chapter's claims;
* ``experiments``: the named experiments, their records, the worker processes;
* ``bench``: timing on a CPU;
* ``measure``: probes and measures on a model;
* ``training``: the one training loop and the runtime (seeds, threads, the machine);
* ``data``: the corpus, the synthetic tasks, published shapes;
* ``core``: configuration, parameter counts, initialisation, the model (standard library,
  NumPy and PyTorch only).

The names below are the ones a reader uses first.
"""

from depthnotes.core.config import (GPT2_FAMILY, PRESETS, DeepNormConstants, ModelConfig,
                                    deepnorm_constants)
from depthnotes.core.model import Transformer
from depthnotes.core.params import ParamCount, count_params

__all__ = [
    "ModelConfig", "PRESETS", "GPT2_FAMILY", "Transformer", "count_params", "ParamCount",
    "deepnorm_constants", "DeepNormConstants",
]
__version__ = "0.1.0"
