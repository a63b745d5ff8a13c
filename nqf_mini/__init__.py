"""nqf_mini: the neural quadratic form, small enough to read, fast enough to teach with.

The public names, in the order the course introduces them:

* Chapter 1: :func:`structure_matrix`, :func:`quadratic_expansion`, :class:`QuadraticExpansion`,
  the symmetry checks and :func:`remainder_order`.
* Chapter 2: :mod:`nqf_mini.architectures` (``make_architecture``, ``ARCHITECTURES``) and
  :mod:`nqf_mini.commutativity` (commutators and common eigenbases of the data matrices).
* Chapter 3: :mod:`nqf_mini.dynamics` (``simulate_W``, ``simulate_M``) and :mod:`nqf_mini.compression`.
* Chapter 4: :mod:`nqf_mini.lotka_volterra` and :mod:`nqf_mini.riccati` (exactly solvable regimes).
* Chapter 5: :mod:`nqf_mini.networks` (a two-layer network and its NQF trained side by side) and
  :mod:`nqf_mini.ignition` (switch-on times of modes and their ln(1/eps) law).
* Chapter 6: :mod:`nqf_mini.scaling` (closed-form loss curves, predicted exponents,
  :func:`fit_power_law`) and :mod:`nqf_mini.spectral_data` (Fourier and orthonormal data).
* Chapter 7: :mod:`nqf_mini.teacher_student`, :mod:`nqf_mini.ntk` (lazy versus feature learning),
  trajectory remainders (:mod:`nqf_mini.remainder`) and near-commuting data
  (:mod:`nqf_mini.commutativity`).
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

from .networks import (
    TwoLayerRun,
    first_exceeding,
    loss_gap,
    relative_gap,
    train_two_layer,
    two_layer_init,
    two_layer_output,
)

# Chapter 5 (sudden learning)
from .ignition import (
    IgnitionFit,
    crossing_times,
    ignition_slope,
    ignition_times,
    limit_ignition_slopes,
    logistic_ignition_time,
    mode_fractions,
    predicted_ignition_time,
)
from .lotka_volterra import nnls_end_state, piecewise_linear_limit   # Chapter 4 helpers, used in 5

_CHAPTER5_NAMES = [
    "IgnitionFit", "crossing_times", "ignition_slope", "ignition_times", "limit_ignition_slopes",
    "logistic_ignition_time", "mode_fractions", "nnls_end_state", "piecewise_linear_limit",
    "predicted_ignition_time",
]

# Chapter 6 (scaling laws)
from . import scaling, spectral_data
from .scaling import (
    PowerLawFit, RankOneCurve, feature_exponent, feature_wise_curve, fit_power_law, fourier_exponent,
    half_capacity_times, half_times, hurwitz_tail, ignition_front, ignition_window,
    logistic_loss_curve, nonproportional_exponent, power_law_modes, rank_one_curve, rank_one_exponent,
    sample_exponent, sample_wise_curve, train_square_network,
)
from .spectral_data import (
    FourierData, OrthonormalSamples, fourier_basis, fourier_features, orthonormal_samples,
    proportional_init,
)

_CHAPTER6_NAMES = [
    "scaling", "spectral_data", "PowerLawFit", "RankOneCurve", "feature_exponent",
    "feature_wise_curve", "fit_power_law", "fourier_exponent", "half_times", "hurwitz_tail",
    "ignition_front", "half_capacity_times", "ignition_window", "logistic_loss_curve",
    "nonproportional_exponent", "power_law_modes", "rank_one_curve", "rank_one_exponent",
    "sample_exponent", "sample_wise_curve", "train_square_network", "FourierData",
    "OrthonormalSamples", "fourier_basis", "fourier_features", "orthonormal_samples",
    "proportional_init",
]

# Chapter 7 (where the NQF breaks)
from . import ntk, teacher_student
from .commutativity import joint_diagonalizer, nearest_commuting, perturb_commuting
from .ntk import drift_scaling, nqf_ntk, ntk_drift, ntk_regime, scaled_nqf_problem
from .remainder import ScaledRemainder, scaled_remainder, trajectory_remainder
from .teacher_student import best_linear_fit, best_linear_loss, make_teacher, online_stream

_CHAPTER7_NAMES = [
    "ntk", "teacher_student", "joint_diagonalizer", "nearest_commuting", "perturb_commuting",
    "drift_scaling", "nqf_ntk", "ntk_drift", "ntk_regime", "scaled_nqf_problem", "ScaledRemainder",
    "scaled_remainder", "trajectory_remainder", "best_linear_fit", "best_linear_loss", "make_teacher",
    "online_stream",
]

__version__ = "0.1.0"

__all__ = [
    "TwoLayerRun", "first_exceeding", "loss_gap", "relative_gap", "train_two_layer", "two_layer_init",
    "two_layer_output",
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
    *_CHAPTER5_NAMES, *_CHAPTER6_NAMES, *_CHAPTER7_NAMES,
]
