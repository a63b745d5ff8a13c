"""Architectures as data: each module f(W, x) next to its closed-form structure matrix A(x).

Every architecture is a small frozen dataclass registered under a name in :data:`ARCHITECTURES`
(see :mod:`.base` for the interface). One module per family, in the order of Chapter 2:

* :mod:`.mlp`: ``mlp`` (two-layer MLP, Chapter 1),
* :mod:`.cnn`: ``cnn`` (1-D CNN, channels as units),
* :mod:`.attention`: ``attention`` (multi-head) and ``qk_attention`` (query-key only),
* :mod:`.moe`: ``moe`` (mixture of linear experts; linear, tanh, sigmoid or softmax gates),
* :mod:`.factorisation`: ``phase_retrieval``, ``symmetric_sensing``, ``asymmetric_sensing``,
  ``matrix_completion``, ``word2vec``, ``deep_linear`` (all exactly quadratic).

The closed forms are derived in Chapters 1 and 2 and tested against autograd. Adding an
architecture is one decorated class, its fast paths on many samples included; nothing elsewhere
branches on names or types. Every public method checks its arguments (shape, dtype, device,
finiteness of ``x`` and ``W``) and names the one at fault.
"""

from .base import ARCHITECTURES, Architecture, Forms, InputPart, make_architecture, register
from .mlp import TwoLayerMLP
from .cnn import ConvNet1D, patch_matrix
from .attention import MultiHeadAttention, QKAttention
from .moe import GATES, Gate, MixtureOfExperts
from .factorisation import (
    AsymmetricSensing,
    DeepLinear,
    MatrixCompletion,
    PhaseRetrieval,
    SymmetricSensing,
    Word2Vec,
)

__all__ = [
    "ARCHITECTURES",
    "Architecture",
    "AsymmetricSensing",
    "ConvNet1D",
    "DeepLinear",
    "Forms",
    "GATES",
    "Gate",
    "InputPart",
    "MatrixCompletion",
    "MixtureOfExperts",
    "MultiHeadAttention",
    "PhaseRetrieval",
    "QKAttention",
    "SymmetricSensing",
    "TwoLayerMLP",
    "Word2Vec",
    "make_architecture",
    "patch_matrix",
    "register",
]
