"""Package-wide conventions: argument validation messages and device selection."""

import math

import pytest
import torch

import nqf_mini as nqf
from nqf_mini import _validate as v

from .input_cases import call_with_limit


def test_as_tensor_messages():
    with pytest.raises(ValueError, match="argument `x`: expected a 2-D tensor, got shape \\(3,\\)"):
        v.as_tensor("x", [1.0, 2.0, 3.0], ndim=2)
    with pytest.raises(
        TypeError, match="argument `x`: expected a real tensor, got dtype torch.complex64"
    ):
        v.as_tensor("x", torch.zeros(2, dtype=torch.complex64))
    with pytest.raises(TypeError, match="argument `x`: expected a tensor or array of numbers"):
        v.as_tensor("x", "abc")
    assert v.as_tensor("x", [1, 2]).dtype == torch.float64


def test_symmetry_and_psd_checks():
    with pytest.raises(
        ValueError, match="argument `A`: expected symmetric matrices, got max \\|X - X\\^T\\| = 1"
    ):
        v.require_symmetric("A", torch.tensor([[0.0, 1.0], [0.0, 0.0]]))
    with pytest.raises(
        ValueError,
        match="argument `M0`: expected a positive semi-definite matrix, got smallest eigenvalue -1",
    ):
        v.require_psd("M0", torch.diag(torch.tensor([1.0, -1.0])))
    v.require_psd("M0", torch.eye(3))


def test_sign_and_integer_checks():
    with pytest.raises(ValueError, match="argument `lr`: expected a finite number > 0, got -0.1"):
        v.require_positive("lr", -0.1)
    with pytest.raises(TypeError, match="argument `steps`: expected an integer >= 1"):
        v.require_positive_int("steps", 2.0)
    with pytest.raises(
        ValueError, match="argument `W`: expected shape \\(3, \\*\\), got \\(2, 5\\)"
    ):
        v.require_shape("W", torch.zeros(2, 5), (3, None))


def test_default_device_and_override(monkeypatch):
    monkeypatch.delenv("NQF_DEVICE", raising=False)
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert nqf.default_device().type == expected
    monkeypatch.setenv("NQF_DEVICE", "cpu")
    assert nqf.default_device() == torch.device("cpu")
    monkeypatch.setenv("NQF_DEVICE", "nonsense")
    with pytest.raises(ValueError, match="NQF_DEVICE"):
        nqf.default_device()
    if not torch.cuda.is_available():
        monkeypatch.setenv("NQF_DEVICE", "cuda")
        with pytest.raises(ValueError, match="CUDA is not available"):
            nqf.default_device()


def test_make_architecture_rejects_unknown_names():
    with pytest.raises(
        ValueError, match="argument `name`: expected one of .* got 'transformer9000'"
    ):
        nqf.make_architecture("transformer9000")
    with pytest.raises(ValueError, match="argument `phi`"):
        nqf.make_architecture("mlp", phi="swish2")


def test_the_installed_version_is_the_package_version():
    """The version the installer recorded is ``nqf_mini.__version__`` (pyproject.toml
    reads it from there), the version the Colab cell's tag names."""
    from importlib.metadata import version

    assert version("nqf_mini") == nqf.__version__


def test_explicit_devices_are_checked_like_nqf_device(monkeypatch):
    """device= is parsed and checked as NQF_DEVICE is: a device this machine lacks is a
    ValueError naming `device` (torch's AssertionError before)."""
    from nqf_mini.device import resolve_device

    assert resolve_device("cpu") == torch.device("cpu")
    assert resolve_device(torch.device("cpu")) == torch.device("cpu")
    with pytest.raises(ValueError, match="argument `device`: expected a torch device"):
        resolve_device("bogus")
    with pytest.raises(TypeError, match="argument `device`"):
        resolve_device(3.5)
    with pytest.raises(ValueError, match="argument `device` asks for 'meta'"):
        nqf.identity_init(1e-3, 3, device="meta")
    if (torch.cuda.device_count() if torch.cuda.is_available() else 0) > 7:
        return  # a machine with 8 GPUs
    with pytest.raises(ValueError, match="argument `device` asks for 'cuda:7'"):
        nqf.feature_wise_curve(2.0, 0.8, 10, [1.0, 10.0], device="cuda:7")
    monkeypatch.setenv("NQF_DEVICE", "cuda:7")
    with pytest.raises(ValueError, match="NQF_DEVICE asks for 'cuda:7'"):
        nqf.default_device()


def test_bool_tensors_are_refused_as_numpy_booleans_are():
    y = torch.tensor([True, False, True, False, True, False])
    A = torch.eye(3, dtype=torch.float64).expand(6, 3, 3)
    for bad in (y, y.numpy()):
        with pytest.raises(TypeError, match="argument `y`: expected numbers"):
            nqf.simulate_M(A, bad, 0.01 * torch.eye(3), 0.1, 3)


def test_sizes_fail_before_allocating_and_counts_before_running():
    with pytest.raises(ValueError, match="argument `K`: the modes .* would need .* bytes"):
        nqf.power_law_modes(10**12, 2.0, 0.8)
    with pytest.raises(ValueError, match="argument `p`: .* would need"):
        nqf.isotropic_dataset(10**6)
    with pytest.raises(ValueError, match=r"argument `steps`: expected an integer <= 10,000,000"):
        call_with_limit(
            nqf.simulate_M,
            dict(
                A=torch.eye(2).expand(3, 2, 2),
                y=torch.ones(3),
                M0=torch.eye(2),
                lr=0.1,
                steps=10**12,
            ),
            10,
        )
    with pytest.raises(ValueError, match="argument `trials`"):
        call_with_limit(
            nqf.permutation_asymmetry,
            dict(f=lambda W, x: (W**2).sum(), x=torch.ones(2), p=2, trials=10**12),
            10,
        )
    with pytest.raises(ValueError, match="argument `max_step`: .* RK4 steps"):
        nqf.lotka_volterra([1.0], [[1.0]], [1e-3], [0.0, 10.0], max_step=1e-300)


def test_optional_arguments_are_checked_when_given():
    A = torch.eye(2, dtype=torch.float64).expand(3, 2, 2)
    y, W0 = torch.ones(3, dtype=torch.float64), 0.1 * torch.ones(2, 2, dtype=torch.float64)
    for bad, match in [(math.nan, "stop_below"), (-0.5, "stop_below"), ("0.5", "stop_below")]:
        with pytest.raises((ValueError, TypeError), match=f"argument `{match}`"):
            nqf.simulate_W(A, y, W0, 0.1, 3, stop_below=bad)
    with pytest.raises(TypeError, match="argument `momentum`"):
        nqf.simulate_W(A, y, W0, 0.1, 3, momentum="abc")  # optimizer='sgd' too
    with pytest.raises(TypeError, match="argument `dtype`"):
        nqf.identity_init(1e-3, 3, dtype=torch.int64)
    with pytest.raises(TypeError, match="argument `mu0`"):
        nqf.simulate_M_mu(A, y, torch.eye(2), None, 2, 0.1, 3)
