"""Natural data for the NQF: scikit-learn's handwritten digits, and whitening (Chapter 10).

:func:`digits_data` returns the 1797 8x8 images of scikit-learn's bundled ``load_digits`` (the
UCI optical-recognition digits; no download), as the course uses them: pixel values divided by
16, the 3 pixels that are 0 in every image dropped (so that S_xx = X^T X / n is invertible, p = 61),
each pixel centred; targets either the centred one-hot labels (K = 10, rank 9) or the inputs
themselves (a linear autoencoder, Y = X). scikit-learn is imported only when the data are asked
for; the course lists it among the notebooks' requirements (Colab ships it).

:func:`whiten` maps X to X S_xx^{-1/2} (ZCA whitening), after which S_xx = I exactly: the
covariance-level commutation condition of Chapter 10 holds whatever the targets.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ._validate import (
    as_tensor,
    require_choice,
    require_dtype,
    require_positive,
    require_real,
)
from .device import resolve_device

TARGETS = ("classes", "inputs")
_FILE = ("datasets", "data", "digits.csv.gz")  # inside the scikit-learn package


def _digits_array() -> tuple[np.ndarray, np.ndarray]:
    """(pixels (1797, 64), labels (1797,)) from scikit-learn's bundled file.

    The file is read directly (it is what ``sklearn.datasets.load_digits`` reads), which spares the
    import of scikit-learn's estimators (about 1.5 s); if the file is not where it has always been,
    ``load_digits`` itself is called.
    """
    spec = importlib.util.find_spec("sklearn")
    if spec is None or spec.origin is None:
        raise ImportError(
            "digits_data needs scikit-learn, which is not installed: "
            "pip install scikit-learn (Colab ships it)"
        )
    path = Path(spec.origin).parent.joinpath(*_FILE)
    if path.is_file():
        data = np.loadtxt(path, delimiter=",")
        return data[:, :-1], data[:, -1].astype(np.int64)
    from sklearn.datasets import load_digits  # pragma: no cover (older layouts)

    bunch = load_digits()
    return np.asarray(bunch.data, dtype=np.float64), np.asarray(bunch.target, dtype=np.int64)


def digits_data(
    target: str = "classes",
    *,
    dtype: torch.dtype = torch.float64,
    device: torch.device | str | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    r"""scikit-learn's digits as the course uses them: (X, Y) (Chapter 10).

    The 1797 8x8 images of ``sklearn.datasets.load_digits`` (bundled with scikit-learn, no
    download): pixel values divided by 16, the 3 pixels blank in every image dropped (so that
    :math:`S_{xx} = X^\top X/n` is invertible), each pixel centred (the module docstring).

    Args:
        target: "classes" (Y: the centred one-hot labels, (1797, 10), rank 9) or "inputs"
            (Y = X, a linear autoencoder).
        dtype: of the returned tensors, torch.float64 (default) or torch.float32.
        device: where to put them (None: :func:`nqf_mini.default_device`).

    Returns:
        (X (1797, 61), Y (1797, 10) or (1797, 61)).

    Raises:
        ValueError, TypeError: on a bad argument (naming it).
        ImportError: if scikit-learn is not installed.
    """
    require_choice("target", target, TARGETS)
    require_dtype(dtype)
    pixels, labels = _digits_array()
    X = pixels / 16.0
    X = X[:, X.std(axis=0) > 0]  # drop the 3 pixels blank in every image
    X = X - X.mean(axis=0)
    if target == "classes":
        Y = np.eye(10)[labels]
        Y = Y - Y.mean(axis=0)
    else:
        Y = X
    dev = resolve_device(device)
    return (
        torch.tensor(X, dtype=dtype, device=dev),
        torch.tensor(np.array(Y), dtype=dtype, device=dev),
    )


def whiten(X: Any, *, strength: float = 1.0, rtol: float = 1e-10) -> torch.Tensor:
    r"""ZCA whitening :math:`X S_{xx}^{-s/2}`, :math:`S_{xx} = X^\top X/n`; at strength
    :math:`s = 1` the result has :math:`S_{xx} = I` (Chapter 10).

    The map is symmetric (no rotation), so each whitened pixel stays attached to its position.
    Strengths :math:`0 \le s \le 1` give second moment :math:`S_{xx}^{1-s}`: a path from the raw
    inputs (s = 0) to whitened ones (s = 1) along which the data commute more and more
    (:func:`nqf_mini.covariance_commutator`). It needs :math:`S_{xx}` positive definite: drop
    constant columns first.

    Args:
        X: inputs, shape (n, p), n >= p.
        strength: how far to whiten, :math:`0 \le s \le 1` (default 1).
        rtol: smallest accepted eigenvalue of :math:`S_{xx}` relative to the largest.

    Returns:
        The whitened inputs (n, p), in X's dtype and on its device (computed in float64).

    Raises:
        ValueError: if :math:`S_{xx}` is singular to ``rtol`` (the message gives its smallest
            eigenvalue), or on a bad argument (naming it).
        TypeError: on an argument of the wrong kind (naming it).
    """
    X = as_tensor("X", X, ndim=2)
    strength = require_real("strength", strength)
    if not 0.0 <= strength <= 1.0:
        raise ValueError(f"argument `strength`: expected a number in [0, 1], got {strength}")
    rtol = require_positive("rtol", rtol)
    X64 = X.to(torch.float64)
    e, Q = torch.linalg.eigh(X64.T @ X64 / X.shape[0])
    if not bool(e[0] > rtol * e[-1]):
        raise ValueError(
            f"argument `X`: expected X^T X / n positive definite, got smallest "
            f"eigenvalue {e[0].item():.3g} against largest {e[-1].item():.3g} "
            f"(rtol = {rtol:g}); drop constant or duplicated columns first"
        )
    return (X64 @ (Q * e.pow(-0.5 * strength)) @ Q.T).to(X.dtype)
