"""nqf_mini: the neural quadratic form, small enough to read, fast enough to teach with.

The public names below are grouped by the chapter of the course that introduces them; the modules
they come from are named after what they compute (e.g. :mod:`nqf_mini.lotka_volterra`), and each
module has a few more specialised names. Coursework (self-checks, figure style, rounded printing)
lives apart in :mod:`nqf_mini.course`, which ``import nqf_mini`` does not load.

Tensors and arrays, one rule for the whole package: functions that compute a mathematical object
(a matrix, a trajectory, a closed-form curve, a set of times) take and return torch tensors, on the
device of their inputs (or ``device=``, default :func:`default_device`). The records of a
simulated run and measurements made on runs (loss histories, recorded steps, gaps between two runs,
fits) are NumPy float64 arrays, ready to plot and print. "Never" (a mode that never ignites, a
crossing that never happens) is ``math.inf`` in both; no function returns NaN. Python lists are
read as float64. Bad input raises ``ValueError`` or ``TypeError`` naming the argument; a run that
blows up raises :class:`DivergenceError` with a smaller step to try.
"""

# Throughout
from .device import default_device
from .seeds import generator
from .training import DivergenceError

# Chapter 1: the neural quadratic form
from .blocks import offdiag
from .quadratic_form import nqf_value, quadratic_expansion, structure_matrices, structure_matrix
from .remainder import remainder_order
from .symmetry import permutation_asymmetry, satisfies_zgz, zgz_violation

# Chapter 2: the structure matrices of each architecture
from .architectures import make_architecture
from .commutativity import max_commutator
from .module_training import train_module

# Chapter 3: training closes on M
from .compression import compress_data_subspace, compress_rank, lift_weights, psd_factor
from .dynamics import simulate_M, simulate_M_mu, simulate_W

# Chapter 4: the Lotka-Volterra reduction
from .lotka_volterra import (
    logistic,
    lotka_volterra,
    mode_strengths,
    nnls_end_state,
    reduce_commuting,
)
from .piecewise_linear import piecewise_linear_limit
from .riccati import (
    isotropic_dataset,
    isotropy_constant,
    riccati_closed_form,
    single_sample_solution,
)

# Chapter 5: sudden learning
from .agreement import first_exceeding, loss_gap, relative_gap
from .ignition import (
    crossing_times,
    ignition_slope,
    ignition_times,
    logistic_ignition_time,
    mode_fractions,
    predicted_ignition_time,
)
from .initialisation import eps_from_sigma, identity_init
from .networks import train_two_layer, two_layer_init, two_layer_output
from .piecewise_linear import limit_ignition_slopes
from .remainder import trajectory_remainder

# Chapter 6: scaling laws
from .exponents import (
    feature_exponent,
    fourier_exponent,
    nonproportional_exponent,
    rank_one_exponent,
    sample_exponent,
)
from .loss_curves import (
    feature_wise_curve,
    hurwitz_tail,
    ignition_window,
    logistic_loss_curve,
    power_law_modes,
    sample_wise_curve,
)
from .commuting_nqf import commuting_data, train_commuting_nqf
from .networks import train_square_network
from .power_law_fit import fit_power_law
from .rank_one import rank_one_curve
from .spectral_data import fourier_features, fourier_modes, orthonormal_samples, proportional_init

# Chapter 7: where the NQF breaks
from .commutativity import nearest_commuting, perturb_commuting
from .ntk import drift_scaling, ntk_drift, ntk_regime, scaled_nqf_problem
from .remainder import scaled_remainder
from .stacked_dynamics import simulate_M_stacked
from .teacher_student import best_linear_fit, make_teacher, online_stream

# Chapters 8 and 9: the paper's experiments (deep networks: nqf_mini.deep)
from .agreement import agreement_window
from .surrogates import module_pair

# Chapter 10: the neural quadratic form on real data
from .commutativity import covariance_commutator, mlp_commutators
from .real_data import digits_data, whiten
from .staircase import data_modes, fitted_fractions, predict_staircase

__version__ = "0.2.0"

__all__ = [
    # throughout
    "default_device",
    "generator",
    "DivergenceError",
    # Chapter 1
    "structure_matrix",
    "structure_matrices",
    "quadratic_expansion",
    "nqf_value",
    "offdiag",
    "permutation_asymmetry",
    "zgz_violation",
    "satisfies_zgz",
    "remainder_order",
    # Chapter 2
    "make_architecture",
    "max_commutator",
    "train_module",
    # Chapter 3
    "simulate_W",
    "simulate_M",
    "simulate_M_mu",
    "compress_rank",
    "lift_weights",
    "psd_factor",
    "compress_data_subspace",
    # Chapter 4
    "lotka_volterra",
    "logistic",
    "reduce_commuting",
    "mode_strengths",
    "nnls_end_state",
    "piecewise_linear_limit",
    "isotropy_constant",
    "isotropic_dataset",
    "riccati_closed_form",
    "single_sample_solution",
    # Chapter 5
    "two_layer_init",
    "two_layer_output",
    "train_two_layer",
    "crossing_times",
    "ignition_times",
    "logistic_ignition_time",
    "predicted_ignition_time",
    "ignition_slope",
    "limit_ignition_slopes",
    "mode_fractions",
    "loss_gap",
    "relative_gap",
    "first_exceeding",
    "trajectory_remainder",
    "identity_init",
    "eps_from_sigma",
    # Chapter 6
    "feature_exponent",
    "sample_exponent",
    "fourier_exponent",
    "rank_one_exponent",
    "nonproportional_exponent",
    "logistic_loss_curve",
    "hurwitz_tail",
    "power_law_modes",
    "feature_wise_curve",
    "sample_wise_curve",
    "ignition_window",
    "fit_power_law",
    "rank_one_curve",
    "fourier_features",
    "fourier_modes",
    "orthonormal_samples",
    "proportional_init",
    "train_square_network",
    "commuting_data",
    "train_commuting_nqf",
    # Chapter 7
    "make_teacher",
    "online_stream",
    "best_linear_fit",
    "scaled_nqf_problem",
    "ntk_drift",
    "drift_scaling",
    "ntk_regime",
    "perturb_commuting",
    "nearest_commuting",
    "scaled_remainder",
    "simulate_M_stacked",
    # Chapters 8 and 9
    "module_pair",
    "agreement_window",
    # Chapter 10
    "digits_data",
    "whiten",
    "mlp_commutators",
    "covariance_commutator",
    "data_modes",
    "predict_staircase",
    "fitted_fractions",
]


def __dir__() -> list[str]:
    """What tab completion offers: the public names, not the submodules."""
    return sorted(__all__ + ["__version__"])
