"""The registry and the interface every architecture implements (Chapter 2).

An architecture is a small frozen dataclass registered under a name. It knows

* what one unit is (``unit``) and how many parameters :math:`p` it has,
* the shape of its input (:meth:`Architecture.input_parts`),
* the original module ``f(W, x)`` in the :func:`~nqf_mini.structure_matrix` convention
  (W of shape (p, d), units are columns, scalar output),
* the closed forms :math:`A(x)` and, where ZGZ fails, :math:`f_0(x), g(x), B(x)` of the
  general form :math:`f = f_0 + g^\\top m + m^\\top B m + \\mathrm{Tr}[MA] + O(|W|^3)`,
* whether ZGZ holds and the order of the remainder (None: exactly quadratic).

The public methods (:meth:`~Architecture.f`, :meth:`~Architecture.A`, ...) check their
arguments and then call the class's own computation, written in methods with a leading
underscore. Adding an architecture is one class: implement ``_f`` and ``_A`` (and ``_f0``,
``_g``, ``_B`` where ZGZ fails), ``p``, ``input_parts`` and ``sample_input``, and decorate it
with :func:`register`; it may add ``_batched_forms`` and ``_predictor``, the closed forms and
the network on many samples at once (the defaults loop over the samples, or vmap).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple
from collections.abc import Callable

import torch

from .._validate import (
    DATA_DEVICES,
    as_tensor,
    describe,
    require_shape,
)
from ..quadratic_form import QuadraticExpansion

ARCHITECTURES: dict[str, type[Architecture]] = {}


def register(cls: type[Architecture]) -> type[Architecture]:
    """Class decorator adding an architecture to :data:`ARCHITECTURES` under ``cls.name``.

    Raises:
        ValueError: if the name is taken.
    """
    if cls.name in ARCHITECTURES:
        raise ValueError(f"architecture name {cls.name!r} is already registered")
    ARCHITECTURES[cls.name] = cls
    return cls


def make_architecture(name: str, **params: Any) -> Architecture:
    """Instantiate a registered architecture, e.g. ``make_architecture('mlp', n_in=3)``.

    The architectures and their structure matrices :math:`A(x)` are those of Chapter 2.

    Args:
        name: a key of :data:`ARCHITECTURES` (``'mlp'``, ``'cnn'``, ``'attention'``,
            ``'qk_attention'``, ``'moe'``, ``'phase_retrieval'``, ...).
        **params: the parameters of that architecture (its dataclass fields).

    Returns:
        The architecture, a frozen dataclass.

    Raises:
        ValueError: for an unknown name or a bad parameter value (naming it).
        TypeError: for a parameter the architecture does not have.
    """
    if not isinstance(name, str) or name not in ARCHITECTURES:
        raise ValueError(f"argument `name`: expected one of {sorted(ARCHITECTURES)}, got {name!r}")
    cls = ARCHITECTURES[name]
    known = set(getattr(cls, "__dataclass_fields__", {}))
    unknown = sorted(set(params) - known)
    if unknown:
        raise TypeError(
            f"argument `{unknown[0]}`: architecture {name!r} has no parameter "
            f"{unknown[0]!r}; its parameters are {sorted(known)}"
        )
    return cls(**params)


@dataclass(frozen=True)
class InputPart:
    """One tensor of an architecture's input: what it is and its shape (one sample)."""

    label: str
    shape: tuple[int, ...]


class Forms(NamedTuple):
    """The closed forms on n samples: f0 (n,), g (n, p) or None (zero), A (n, p, p), B (n, p, p)
    or None (zero)."""

    f0: torch.Tensor
    g: torch.Tensor | None
    A: torch.Tensor
    B: torch.Tensor | None


def _functorch_wrapped(t: torch.Tensor) -> bool:
    """Whether ``t`` is traced by torch.func (vmap, grad), where its values cannot be read."""
    check = getattr(torch._C._functorch, "is_functorch_wrapped_tensor", None)
    return bool(check(t)) if check is not None else False


def _reword(exc: Exception, name: str, label: str) -> Exception:
    """The same exception, its message saying which part of the input is at fault."""
    msg = str(exc).replace(f"argument `{name}`:", f"argument `{name}`: {label}:", 1)
    return type(exc)(msg)


def _tensor(
    name: str,
    label: str,
    value: Any,
    shape: tuple[int | None, ...],
    dtype: torch.dtype | None,
    device: torch.device | None,
    arch: Architecture,
) -> torch.Tensor:
    """One part of an input: real, of ``shape``, cast to dtype / device (finiteness is checked
    for all parts at once by :meth:`Architecture.check_input`)."""
    try:
        if isinstance(value, torch.Tensor) and _functorch_wrapped(value):
            t = value if value.is_floating_point() else value.double()
            t = t.to(dtype=dtype or t.dtype, device=device or t.device)
        else:
            t = as_tensor(name, value, dtype=dtype, device=device, finite=False)
        require_shape(name, t, shape)
    except (TypeError, ValueError) as exc:
        raise _reword(exc, name, f"{label} of {arch.describe()}") from None
    return t


def _require_finite_parts(
    name: str, parts: tuple[InputPart, ...], values: list[torch.Tensor], arch: Architecture
) -> None:
    """One test for NaN / inf over every part (a part traced by torch.func is skipped); the
    message names the part."""
    plain = [(p, v) for p, v in zip(parts, values) if not _functorch_wrapped(v)]
    if not plain:
        return
    flat = (
        plain[0][1].reshape(-1) if len(plain) == 1 else torch.cat([v.reshape(-1) for _, v in plain])
    )
    if bool(torch.isfinite(flat).all()):
        return
    for part, value in plain:
        if not bool(torch.isfinite(value).all()):
            bad = "NaN" if bool(torch.isnan(value).any()) else "inf"
            raise ValueError(
                f"argument `{name}`: {part.label} of {arch.describe()}: expected "
                f"finite values, got {bad}"
            )


class Architecture:
    """Interface shared by all architectures (see the module docstring)."""

    name: ClassVar[str]
    unit: ClassVar[str]

    # --- what a subclass provides ------------------------------------------------------------

    @property
    def p(self) -> int:
        """The number of parameters of one unit."""
        raise NotImplementedError

    def input_parts(self) -> tuple[InputPart, ...]:
        """The tensors of one input ``x``: one part for a tensor input, several for a tuple."""
        raise NotImplementedError

    def _f(self, W: torch.Tensor, x: Any) -> torch.Tensor:
        raise NotImplementedError

    def _A(self, x: Any) -> torch.Tensor:
        raise NotImplementedError

    def _f0(self, x: Any) -> torch.Tensor:
        dtype, device = self._like(x)
        return torch.zeros((), dtype=dtype, device=device)

    def _g(self, x: Any) -> torch.Tensor:
        dtype, device = self._like(x)
        return torch.zeros(self.p, dtype=dtype, device=device)

    def _B(self, x: Any) -> torch.Tensor:
        dtype, device = self._like(x)
        return torch.zeros(self.p, self.p, dtype=dtype, device=device)

    def sample_input(self, seed: int = 0) -> Any:
        """A random input of this architecture (Gaussian entries from :func:`nqf_mini.generator`),
        float64 (Chapter 2).

        Args:
            seed: seed of :func:`nqf_mini.generator`.

        Returns:
            One input (see :meth:`input_parts`).
        """
        raise NotImplementedError

    # --- properties ----------------------------------------------------------------------------

    @property
    def zgz(self) -> bool:
        """Whether ZGZ holds (the gradient of a unit vanishes at :math:`w_i = 0`)."""
        return True

    @property
    def n_units(self) -> int | None:
        """The number of units d the closed forms assume; None when they hold for every d.

        Pass it as ``d=`` to :func:`~nqf_mini.structure_matrix` and
        :func:`~nqf_mini.quadratic_expansion`: a softmax gate over d experts has A and B that
        depend on d, and query-key attention has :math:`f_0 = d\\,\\overline{y}`.
        """
        return None

    @property
    def remainder_order(self) -> int | None:
        """Expected log-log slope of the remainder; None for an exactly quadratic model."""
        raise NotImplementedError

    def _normalise(self, **values: Any) -> None:
        """Store checked parameter values (a NumPy or 0-d tensor integer becomes an int), so
        that equal architectures compare and hash equal."""
        for key, value in values.items():
            object.__setattr__(self, key, value)

    def describe(self) -> str:
        """The architecture and its parameters, for messages: ``"mlp(n_in=3, ...)"``."""
        params = (
            ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in dataclasses.fields(self))
            if dataclasses.is_dataclass(self)
            else ""
        )
        return f"{self.name}({params})"

    # --- checked arguments ---------------------------------------------------------------------

    def check_input(
        self,
        x: Any,
        name: str = "x",
        *,
        dtype: torch.dtype | None = None,
        device: torch.device | None = None,
        batch: int | None = None,
    ) -> Any:
        """Validate one input (or, with ``batch``, n inputs stacked on a leading axis): real, finite
        tensors of the shapes of :meth:`input_parts`, cast to a common floating dtype and device
        (Chapter 2). Lists and NumPy arrays become tensors.

        Args:
            x: the input (a tensor, or a tuple of tensors for several parts).
            name: the argument named in errors.
            dtype: the floating dtype (default: float64 unless every part is float32).
            device: the device (default: that of the first tensor part).
            batch: None for one input; n for n inputs; 0 for any number of inputs.

        Returns:
            The checked input: a tensor, or a tuple of tensors.

        Raises:
            TypeError, ValueError: naming ``name`` and the part at fault.
        """
        parts = self.input_parts()
        lead: tuple[int | None, ...] = () if batch is None else (batch or None,)
        if len(parts) == 1:
            values: tuple[Any, ...] = (x,)
        else:
            labels = ", ".join(p.label for p in parts)
            if not isinstance(x, (tuple, list)) or len(x) != len(parts):
                got = (
                    f"{type(x).__name__} of length {len(x)}"
                    if isinstance(x, (tuple, list))
                    else describe(x)
                )
                raise TypeError(
                    f"argument `{name}`: expected a tuple ({labels}) for "
                    f"{self.describe()}, got {got}"
                )
            values = tuple(x)
        if dtype is None:
            floats = [
                v.dtype for v in values if isinstance(v, torch.Tensor) and v.is_floating_point()
            ]
            dtype = (
                torch.float32
                if floats and all(d == torch.float32 for d in floats)
                else torch.float64
            )
        if device is None:
            device = next(
                (
                    v.device
                    for v in values
                    if isinstance(v, torch.Tensor) and v.device.type in DATA_DEVICES
                ),
                None,
            )
        out = [
            _tensor(name, part.label, value, lead + part.shape, dtype, device, self)
            for part, value in zip(parts, values)
        ]
        _require_finite_parts(name, parts, out, self)
        if batch == 0 and len({t.shape[0] for t in out}) > 1:
            raise ValueError(
                f"argument `{name}`: expected one leading sample dimension, got "
                f"sizes {[t.shape[0] for t in out]}"
            )
        return out[0] if len(parts) == 1 else tuple(out)

    def check_weights(self, W: Any, name: str = "W", *, stacked: bool = False) -> torch.Tensor:
        """Validate weights W (p, d), units as columns (Chapter 2), or stacked runs (R, p, d).

        Args:
            W: the weights (a tensor, NumPy array or list).
            name: the argument named in errors.
            stacked: expect (R, p, d).

        Returns:
            W as a real, finite tensor (float32 and float64 kept, other dtypes float64).

        Raises:
            TypeError, ValueError: naming ``name``.
        """
        if isinstance(W, torch.Tensor) and _functorch_wrapped(W):
            W = W if W.is_floating_point() else W.double()
        else:
            W = as_tensor(name, W)
        want = "(R, p, d)" if stacked else "(p, d)"
        if W.ndim != (3 if stacked else 2) or W.shape[-2] != self.p or W.shape[-1] < 1:
            raise ValueError(
                f"argument `{name}`: expected weights of shape {want} with p = "
                f"{self.p} for {self.describe()}, got {tuple(W.shape)}"
            )
        return W

    def _like(self, x: Any) -> tuple[torch.dtype, torch.device]:
        """The floating dtype and the device of a checked input."""
        first = x[0] if isinstance(x, tuple) else x
        dtype = first.dtype if first.is_floating_point() else torch.float64
        return dtype, first.device

    # --- the module and its closed forms (checked) -----------------------------------------

    def f(self, W: Any, x: Any) -> torch.Tensor:
        """The module f(W, x) on one input: a scalar, differentiable in W (Chapter 2).

        The class docstring gives f; W holds one unit per column, as in
        :func:`nqf_mini.structure_matrix`.

        Args:
            W: weights (p, d), units as columns (a tensor, NumPy array or list).
            x: one input (see :meth:`input_parts`), cast to the dtype and device of ``W``.

        Returns:
            A 0-d tensor.

        Raises:
            ValueError, TypeError: on a bad ``W`` (not (p, d), not finite) or ``x``, naming it.
        """
        W = self.check_weights(W)
        return self._f(W, self.check_input(x, dtype=W.dtype, device=W.device))

    def A(self, x: Any) -> torch.Tensor:
        r"""The structure matrix :math:`A(x) = \tfrac12\,\partial^2 f/\partial w_i^2` at W = 0, in
        closed form (Theorem 1, Chapter 1; the class docstring gives it, Chapter 2 derives it).

        Args:
            x: one input (see :meth:`input_parts`).

        Returns:
            A symmetric (p, p) tensor in the dtype and on the device of ``x``.

        Raises:
            ValueError, TypeError: if ``x`` is not an input of this architecture (a wrong shape,
                None, a string, NaN or inf, a bool or complex tensor), naming ``x`` and the part at
                fault.
        """
        return self._A(self.check_input(x))

    def f0(self, x: Any) -> torch.Tensor:
        """:math:`f_0(x) = f(0, x)`, the constant of the general form (Chapter 1; Chapter 2 per
        architecture).

        Args:
            x: one input (see :meth:`input_parts`).

        Returns:
            A 0-d tensor.

        Raises:
            ValueError, TypeError: if ``x`` is not an input of this architecture (a wrong shape,
                None, a string, NaN or inf, a bool or complex tensor), naming ``x`` and the part at
                fault.
        """
        return self._f0(self.check_input(x))

    def g(self, x: Any) -> torch.Tensor:
        r"""The linear coefficient :math:`g(x) = \nabla_{w_i} f` at W = 0 of the general form
        (zero under ZGZ; Chapter 1, Chapter 2 per architecture).

        Args:
            x: one input (see :meth:`input_parts`).

        Returns:
            A tensor of shape (p,).

        Raises:
            ValueError, TypeError: if ``x`` is not an input of this architecture (a wrong shape,
                None, a string, NaN or inf, a bool or complex tensor), naming ``x`` and the part at
                fault.
        """
        return self._g(self.check_input(x))

    def B(self, x: Any) -> torch.Tensor:
        r"""The cross-unit matrix :math:`B(x) = \tfrac12\,\partial^2 f/\partial w_i\partial w_j`
        (:math:`i \ne j`) at W = 0 of the general form (zero under ZGZ; Chapter 1, Chapter 2 per
        architecture).

        Args:
            x: one input (see :meth:`input_parts`).

        Returns:
            A symmetric (p, p) tensor.

        Raises:
            ValueError, TypeError: if ``x`` is not an input of this architecture (a wrong shape,
                None, a string, NaN or inf, a bool or complex tensor), naming ``x`` and the part at
                fault.
        """
        return self._B(self.check_input(x))

    def expansion(self, x: Any) -> QuadraticExpansion:
        r"""The closed-form general expansion
        :math:`f = f_0 + g^\top m + m^\top Bm + \mathrm{Tr}[MA] + O(|W|^3)` at input ``x``
        (Chapters 1, 2).

        Args:
            x: one input (see :meth:`input_parts`).

        Returns:
            A :class:`~nqf_mini.quadratic_form.QuadraticExpansion` in the dtype of ``x``.

        Raises:
            ValueError, TypeError: if ``x`` is not an input of this architecture (a wrong shape,
                None, a string, NaN or inf, a bool or complex tensor), naming ``x`` and the part at
                fault.
        """
        x = self.check_input(x)
        A = self._A(x)
        return QuadraticExpansion(
            f0=self._f0(x).to(A),
            g=self._g(x).to(A),
            A=A,
            B=self._B(x).to(A),
            atol=1e3 * torch.finfo(A.dtype).eps,
        )

    # --- many samples at once ----------------------------------------------------------------

    def batched_forms(self, xs: Any) -> Forms:
        """The closed forms :math:`f_0, g, A, B` on n inputs stacked on a leading axis
        (Chapters 2, 8).

        Equal to :meth:`f0`, :meth:`g`, :meth:`A`, :meth:`B` sample by sample; an architecture may
        compute them in one vectorised pass (the MLP, attention and the mixture of experts do).

        Args:
            xs: n inputs, each tensor of :meth:`input_parts` with a leading axis n.

        Returns:
            :class:`Forms` (f0 (n,), g (n, p) or None, A (n, p, p), B (n, p, p) or None), with g and
            B None where they vanish for every sample.

        Raises:
            ValueError, TypeError: if ``xs`` is not a stack of inputs (naming ``xs``).
        """
        return self._batched_forms(self.check_input(xs, "xs", batch=0))

    def batched_f(self, W: Any, xs: Any) -> torch.Tensor:
        """The module on n inputs at once (Chapter 8): equal to :meth:`f` sample by sample
        (and run by run).

        Args:
            W: weights (p, d), or R stacked runs (R, p, d).
            xs: n inputs, each tensor of :meth:`input_parts` with a leading axis n.

        Returns:
            (n,) for W (p, d), (R, n) for stacked runs.

        Raises:
            ValueError, TypeError: on a bad ``W`` or ``xs`` (naming it).
        """
        W = as_tensor("W", W)
        W = self.check_weights(W, stacked=W.ndim == 3)
        xs = self.check_input(xs, "xs", dtype=W.dtype, device=W.device, batch=0)
        return self._predictor(xs)(W)

    def predictor(
        self, xs: Any, *, dtype: torch.dtype | None = None, device: torch.device | None = None
    ) -> Callable[[torch.Tensor], torch.Tensor]:
        """W -> the module on every sample of ``xs``, with the inputs checked once: the
        predictor that :func:`nqf_mini.train_module` calls at each step (Chapter 8).

        Args:
            xs: n inputs, each tensor of :meth:`input_parts` with a leading axis n.
            dtype: the floating dtype to cast ``xs`` to (default: float64 unless all parts are
                float32).
            device: the device to move ``xs`` to (default: theirs).

        Returns:
            A function W -> (n,) for W (p, d), or (R, n) for stacked runs (R, p, d); it does not
            check
            W.

        Raises:
            ValueError, TypeError: if ``xs`` is not a stack of inputs (naming ``xs``).
        """
        return self._predictor(self.check_input(xs, "xs", dtype=dtype, device=device, batch=0))

    def _batched_forms(self, xs: Any) -> Forms:
        """Default: one sample at a time."""
        from .._modules import sample

        n = (xs[0] if isinstance(xs, tuple) else xs).shape[0]
        one = [sample(xs, i) for i in range(n)]
        f0 = torch.stack([self._f0(x) for x in one])
        A = torch.stack([self._A(x) for x in one])
        g = torch.stack([self._g(x) for x in one]).to(A)
        B = torch.stack([self._B(x) for x in one]).to(A)
        return Forms(
            f0=f0.to(A),
            g=None if bool((g == 0).all()) else g,
            A=A,
            B=None if bool((B == 0).all()) else B,
        )

    def _predictor(self, xs: Any) -> Callable[[torch.Tensor], torch.Tensor]:
        """Default: torch.func.vmap of the module over the samples (and runs), a loop where
        vmap cannot trace it."""
        from ..module_training import batched

        n = (xs[0] if isinstance(xs, tuple) else xs).shape[0]
        one, many = batched(self._f, xs, n), batched(self._f, xs, n, True)
        return lambda W: many(W) if W.ndim == 3 else one(W)
