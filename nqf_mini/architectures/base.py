"""The registry and the interface every architecture implements (Chapter 2).

An architecture is a small frozen dataclass registered under a name. It knows
  * what one unit is (``unit``) and how many parameters p it has,
  * the original module ``f(W, x)`` in the :func:`~nqf_mini.structure_matrix` convention
    (W of shape (p, d), units are columns, scalar output),
  * the closed forms A(x) and, where ZGZ fails, f0(x), g(x), B(x) of the general form
    f = f0 + g^T mu + mu^T B mu + Tr[M A] + O(|W|^3),
  * whether ZGZ holds and the order of the remainder (None: exactly quadratic).
"""

from __future__ import annotations

from typing import Any, ClassVar

import torch

from ..quadratic_form import QuadraticExpansion

ARCHITECTURES: dict[str, type["Architecture"]] = {}


def register(cls: type["Architecture"]) -> type["Architecture"]:
    """Class decorator adding an architecture to :data:`ARCHITECTURES` under ``cls.name``."""
    if cls.name in ARCHITECTURES:
        raise ValueError(f"architecture name {cls.name!r} is already registered")
    ARCHITECTURES[cls.name] = cls
    return cls


def make_architecture(name: str, **params: Any) -> "Architecture":
    """Instantiate a registered architecture: ``make_architecture('mlp', n_in=3, phi='tanh')``."""
    if not isinstance(name, str) or name not in ARCHITECTURES:
        raise ValueError(f"argument `name`: expected one of {sorted(ARCHITECTURES)}, got {name!r}")
    cls = ARCHITECTURES[name]
    known = set(getattr(cls, "__dataclass_fields__", {}))
    unknown = sorted(set(params) - known)
    if unknown:
        raise TypeError(f"argument `{unknown[0]}`: architecture {name!r} has no parameter "
                        f"{unknown[0]!r}; its parameters are {sorted(known)}")
    return cls(**params)


class Architecture:
    """Interface shared by all architectures (see the module docstring)."""

    name: ClassVar[str]
    unit: ClassVar[str]

    @property
    def p(self) -> int:
        raise NotImplementedError

    @property
    def zgz(self) -> bool:
        return True

    @property
    def n_units(self) -> int | None:
        """The number of units d the closed forms assume; None when they hold for every d.

        Pass it as ``d=`` to :func:`~nqf_mini.structure_matrix` and
        :func:`~nqf_mini.quadratic_expansion`: a softmax gate over d experts has A and B that
        depend on d, and query-key attention has f0 = d mean(y).
        """
        return None

    @property
    def remainder_order(self) -> int | None:
        """Expected log-log slope of the remainder; None for an exactly quadratic model."""
        raise NotImplementedError

    def f(self, W: torch.Tensor, x: Any) -> torch.Tensor:
        raise NotImplementedError

    def A(self, x: Any) -> torch.Tensor:
        raise NotImplementedError

    def f0(self, x: Any) -> torch.Tensor:
        return torch.zeros((), dtype=torch.float64)

    def g(self, x: Any) -> torch.Tensor:
        return torch.zeros(self.p, dtype=torch.float64)

    def B(self, x: Any) -> torch.Tensor:
        return torch.zeros(self.p, self.p, dtype=torch.float64)

    def sample_input(self, seed: int = 0) -> Any:
        raise NotImplementedError

    def expansion(self, x: Any) -> QuadraticExpansion:
        """The closed-form general expansion (f0, g, A, B) at input ``x``."""
        A = self.A(x)
        cast = dict(dtype=A.dtype, device=A.device)
        return QuadraticExpansion(f0=self.f0(x).to(**cast), g=self.g(x).to(**cast), A=A,
                                  B=self.B(x).to(**cast), atol=1e3 * torch.finfo(A.dtype).eps)
