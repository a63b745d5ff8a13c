"""Fourier features and orthonormal-input samples with power-law spectra (Chapter 6)."""

import math

import pytest
import torch

from nqf_mini.spectral_data import (
    fourier_basis,
    fourier_features,
    orthonormal_samples,
    proportional_init,
)


@pytest.mark.parametrize("K, N", [(6, 7), (7, 9), (32, 34)])
def test_fourier_basis_orthonormal(K, N):
    phi = fourier_basis(K, N, device="cpu")
    assert phi.shape == (N, K)
    assert torch.allclose(phi.T @ phi / N, torch.eye(K, dtype=torch.float64), atol=1e-12)
    theta = 2 * math.pi * torch.arange(N, dtype=torch.float64) / N
    assert torch.allclose(phi[:, 2], math.sqrt(2) * torch.cos(2 * theta))  # phi_3 = sqrt2 cos 2t
    assert torch.allclose(phi[:, 3], math.sqrt(2) * torch.sin(2 * theta))  # phi_4 = sqrt2 sin 2t


def test_fourier_basis_needs_grid_above_nyquist():
    with pytest.raises(ValueError, match="`N`"):
        fourier_basis(6, 6)
    with pytest.raises(ValueError, match="`N`"):
        fourier_basis(7, 8)


def test_fourier_features_spectra():
    data = fourier_features(16, 18, theta=1.0, beta=1.5, device="cpu")
    N, k = 18, torch.arange(1, 17, dtype=torch.float64)
    assert torch.allclose(data.s, k**-1.0) and torch.allclose(data.b, k**-1.5)
    assert torch.allclose(data.X.T @ data.X / N, torch.diag(data.s**2), atol=1e-12)
    assert torch.allclose(data.X.T @ data.y / N, data.s * data.b, atol=1e-12)
    assert torch.allclose(data.basis.T @ data.Y / N, torch.diag(data.b), atol=1e-12)
    assert torch.allclose(data.Y.sum(1), data.y)


def test_orthonormal_samples_and_proportional_init():
    data = orthonormal_samples(20, 1.0, 0.6, p=24, seed=1, device="cpu")
    mu = torch.arange(1, 21, dtype=torch.float64)
    assert torch.allclose(data.O @ data.O.T, torch.eye(20, dtype=torch.float64), atol=1e-12)
    assert torch.allclose(data.y, mu**-1.0)
    assert torch.allclose(data.s**2, mu**0.4)
    assert torch.allclose(data.X @ data.X.T, torch.diag(data.s**2), atol=1e-12)
    W0 = proportional_init(data, 1e-4, 4, seed=0)
    z0 = ((data.O @ W0) ** 2).sum(1)
    assert torch.allclose(z0, 1e-4 * data.y / data.s**2)
    again = orthonormal_samples(20, 1.0, 0.6, p=24, seed=1, device="cpu")
    assert torch.equal(again.X, data.X)
    with pytest.raises(ValueError, match="`p`"):
        orthonormal_samples(20, 1.0, 1.0, p=10)
