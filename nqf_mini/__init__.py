"""nqf_mini: the neural quadratic form, small enough to read, fast enough to teach with.

The public names, in the order the course introduces them:

* Chapter 1: :func:`structure_matrix`, :func:`quadratic_expansion`, :class:`QuadraticExpansion`,
  the symmetry checks and :func:`remainder_order`.
* Chapter 2: :mod:`nqf_mini.architectures` (``make_architecture``, ``ARCHITECTURES``) and
  :mod:`nqf_mini.commutativity` (commutators and common eigenbases of the data matrices).
* Chapter 3: :mod:`nqf_mini.dynamics` (``simulate_W``, ``simulate_M``) and :mod:`nqf_mini.compression`.
* Chapter 4: :mod:`nqf_mini.lotka_volterra` and :mod:`nqf_mini.riccati` (exactly solvable regimes).
* Throughout: :func:`default_device`, :mod:`nqf_mini.check` (exercise self-checks) and
  :mod:`nqf_mini.plotting` (the figure style).
"""

from . import architectures, check, plotting, report
from . import _checks_ch4, _checks_ch5, _checks_ch6, _checks_ch7  # noqa: F401  (register self-checks)
from .activations import ACTIVATIONS, Activation, get_activation
from .architectures import ARCHITECTURES, make_architecture
from .blocks import offdiag
from .commutativity import (
    CommonEigenbasis,
    common_eigenbasis,
    commutator_norm,
    max_commutator,
    pairwise_commutators,
)
from .compression import compress_data_subspace, compress_rank, lift_weights, psd_factor
from .device import default_device, describe_device
from .dynamics import DivergenceError, TrainingResult, simulate_M, simulate_M_mu, simulate_W
from .lotka_volterra import logistic, lotka_volterra, mode_strengths, reduce_commuting
from .quadratic_form import (
    QuadraticExpansion,
    nqf_value,
    quadratic_expansion,
    structure_matrices,
    structure_matrix,
)
from .riccati import isotropic_dataset, isotropy_constant, riccati_closed_form, single_sample_solution
from .remainder import RemainderFit, remainder_curve, remainder_order
from .symmetry import (
    is_permutation_symmetric,
    permutation_asymmetry,
    satisfies_zgz,
    zgz_violation,
)

from .networks import TwoLayerRun, train_two_layer, two_layer_init, two_layer_output

# --- Chapter 5 (sudden learning): public names ---
# (end of Chapter 5 block)

# --- Chapter 6 (scaling laws): public names ---
# (end of Chapter 6 block)

# --- Chapter 7 (where the NQF breaks): public names ---
# (end of Chapter 7 block)

__version__ = "0.1.0"

__all__ = [
    "TwoLayerRun", "train_two_layer", "two_layer_init", "two_layer_output",
    "DivergenceError", "TrainingResult", "compress_data_subspace", "compress_rank", "isotropic_dataset",
    "isotropy_constant", "lift_weights", "logistic", "lotka_volterra", "mode_strengths", "psd_factor",
    "reduce_commuting", "riccati_closed_form", "simulate_M", "simulate_M_mu", "simulate_W",
    "single_sample_solution",
    "ACTIVATIONS", "ARCHITECTURES", "Activation", "CommonEigenbasis", "common_eigenbasis",
    "commutator_norm", "max_commutator", "pairwise_commutators", "QuadraticExpansion", "RemainderFit",
    "architectures", "check", "default_device", "describe_device", "get_activation",
    "is_permutation_symmetric", "make_architecture", "nqf_value", "offdiag", "permutation_asymmetry",
    "plotting", "quadratic_expansion", "report", "remainder_curve", "remainder_order", "satisfies_zgz",
    "structure_matrices", "structure_matrix", "zgz_violation",
]
