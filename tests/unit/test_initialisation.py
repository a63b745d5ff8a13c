"""The seed's initialisation conventions and the course's eps = z_k(0) (Ch. 5, 6)."""

from __future__ import annotations

import math

import pytest
import torch

import nqf_mini as nqf
from nqf_mini.initialisation import sigma_from_eps


def test_identity_init_starts_every_mode_at_eps(dtype, device):
    W = nqf.identity_init(1e-5, 6, dtype=dtype, device=device)
    assert W.shape == (6, 6) and W.dtype == dtype and W.device.type == device.type
    E = torch.linalg.qr(
        torch.randn(6, 6, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    )[0]
    z = nqf.mode_strengths((W @ W.T).double().cpu(), E)  # any orthonormal basis
    assert torch.allclose(z, torch.full((6,), 1e-5, dtype=torch.float64), rtol=1e-5)
    wide, narrow = nqf.identity_init(0.1, 3, d=5), nqf.identity_init(0.1, 4, d=2)
    assert torch.allclose(wide @ wide.T, 0.1 * torch.eye(3, dtype=torch.float64))
    assert torch.allclose(
        torch.diagonal(narrow @ narrow.T),
        torch.tensor([0.1, 0.1, 0.0, 0.0], dtype=torch.float64),
    )


def test_gaussian_mode_strength_is_d_sigma_squared():
    d, sigma, trials = 8, 0.1, 4000
    W = sigma * torch.randn(
        trials, 5, d, generator=torch.Generator().manual_seed(1), dtype=torch.float64
    )
    e = torch.tensor([0.6, 0.0, 0.8, 0.0, 0.0], dtype=torch.float64)  # a unit vector
    z = ((e @ W) ** 2).sum(-1)  # z(0) = e^T W W^T e
    expected = nqf.eps_from_sigma(sigma, d)
    assert expected == pytest.approx(d * sigma**2)
    assert abs(float(z.mean()) - expected) < 3 * expected * math.sqrt(2 / d / trials)
    assert float(z.std() / z.mean()) == pytest.approx(math.sqrt(2 / d), rel=0.05)
    assert sigma_from_eps(expected, d) == pytest.approx(sigma)


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="`eps`"):
        nqf.identity_init(0.0, 3)
    with pytest.raises(ValueError, match="`d`"):
        nqf.identity_init(0.1, 3, d=0)
    with pytest.raises(ValueError, match="`sigma`"):
        nqf.eps_from_sigma(-1.0, 3)
    with pytest.raises(TypeError, match="`d`"):
        nqf.eps_from_sigma(0.1, 2.5)
