"""Package-wide conventions: argument validation messages and device selection."""

import pytest
import torch

import nqf_mini as nqf
from nqf_mini import _validate as v


def test_as_tensor_messages():
    with pytest.raises(ValueError, match="argument `x`: expected a 2-D tensor, got shape \\(3,\\)"):
        v.as_tensor("x", [1.0, 2.0, 3.0], ndim=2)
    with pytest.raises(TypeError, match="argument `x`: expected a real tensor, got dtype torch.complex64"):
        v.as_tensor("x", torch.zeros(2, dtype=torch.complex64))
    with pytest.raises(TypeError, match="argument `x`: expected a tensor or array of numbers"):
        v.as_tensor("x", "abc")
    assert v.as_tensor("x", [1, 2]).dtype == torch.float64


def test_symmetry_and_psd_checks():
    with pytest.raises(ValueError, match="argument `A`: expected symmetric matrices, got max \\|X - X\\^T\\| = 1"):
        v.require_symmetric("A", torch.tensor([[0.0, 1.0], [0.0, 0.0]]))
    with pytest.raises(ValueError, match="argument `M0`: expected a positive semi-definite matrix, got smallest eigenvalue -1"):
        v.require_psd("M0", torch.diag(torch.tensor([1.0, -1.0])))
    v.require_psd("M0", torch.eye(3))


def test_sign_and_integer_checks():
    with pytest.raises(ValueError, match="argument `lr`: expected a finite number > 0, got -0.1"):
        v.require_positive("lr", -0.1)
    with pytest.raises(TypeError, match="argument `steps`: expected an integer >= 1"):
        v.require_positive_int("steps", 2.0)
    with pytest.raises(ValueError, match="argument `W`: expected shape \\(3, \\*\\), got \\(2, 5\\)"):
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
    with pytest.raises(ValueError, match="argument `name`: expected one of .* got 'transformer9000'"):
        nqf.make_architecture("transformer9000")
    with pytest.raises(ValueError, match="argument `phi`"):
        nqf.make_architecture("mlp", phi="swish2")


def test_the_installed_version_is_the_package_version():
    """The version the installer recorded is ``nqf_mini.__version__`` (pyproject.toml
    reads it from there), the version the Colab cell's tag names."""
    from importlib.metadata import version

    assert version("nqf_mini") == nqf.__version__
