"""Every registered architecture: its closed forms against autograd, and its declared properties.

The oracle is :func:`nqf_mini.quadratic_expansion` (the two-unit Hessian by autograd, Chapter 1);
each closed form of Chapter 2 must agree with it in float64 and float32, on the CPU and on CUDA
when present. The declared ZGZ status and remainder order are measured, not trusted.
"""

import dataclasses
import math

import numpy as np
import pytest
import torch

import nqf_mini as nqf
from nqf_mini.architectures import (ARCHITECTURES, Architecture, MultiHeadAttention, PhaseRetrieval,
                                    SymmetricSensing, TwoLayerMLP, make_architecture, patch_matrix,
                                    register)
from nqf_mini._modules import cast_input as _cast

CASES = [
    ("mlp", {}),
    ("mlp", {"phi": "sigmoid"}),                      # phi(0) = 1/2: the general form
    ("mlp", {"bias": "trainable", "phi": "silu"}),
    ("mlp", {"bias": "frozen", "b0": 0.3}),
    ("cnn", {}),
    ("cnn", {"padding": "circular", "readout": "per_position", "phi": "silu"}),
    ("cnn", {"c_in": 1, "length": 5, "k": 2, "readout": "per_position", "phi": "sigmoid"}),
    ("cnn", {"c_in": 3, "k": 2, "padding": "circular", "phi": "gelu"}),
    ("attention", {}),
    ("attention", {"n_in": 2, "n_tokens": 5, "h": 3, "h_v": 1}),
    ("qk_attention", {}),
    ("qk_attention", {"n_in": 2, "n_tokens": 5, "h": 1, "n_heads": 3}),
    ("moe", {"gate": "linear"}),
    ("moe", {"gate": "tanh"}),
    ("moe", {"gate": "sigmoid"}),
    ("moe", {"gate": "softmax"}),
    ("moe", {"gate": "softmax", "n_in": 2, "n_experts": 5}),
    ("moe", {"gate": "linear", "expert": "neuron"}),  # A = 0: the leading order is cubic
    ("moe", {"gate": "tanh", "expert": "neuron"}),
    ("moe", {"gate": "sigmoid", "expert": "neuron", "n_in": 4}),  # A = O(x)/2, gate invisible
    ("phase_retrieval", {}),
    ("symmetric_sensing", {}),
    ("asymmetric_sensing", {}),
    ("asymmetric_sensing", {"m": 2, "n": 5}),
    ("matrix_completion", {}),
    ("word2vec", {"m": 2, "n": 3}),
    ("deep_linear", {}),
    ("deep_linear", {"n_in": 4, "w3": (2.0,)}),
]
IDS = [name + "".join(f"-{k}={v}" for k, v in kw.items()) for name, kw in CASES]
GENERAL = [(c, i) for c, i in zip(CASES, IDS) if not make_architecture(c[0], **c[1]).zgz]
DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(),
                                                                 reason="CUDA is not available"))]
DTYPES = [pytest.param(torch.float64, id="float64"), pytest.param(torch.float32, id="float32")]
SEEDS = (0, 1, 2)


def arch_of(case) -> Architecture:
    name, kw = case
    return make_architecture(name, **kw)


def units(arch: Architecture) -> int:
    """The d the closed forms are stated for (2 when they hold for every d)."""
    return arch.n_units or 2


def W_random(p: int, d: int, seed: int = 3) -> torch.Tensor:
    return torch.randn(p, d, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def flatten(x) -> torch.Tensor:
    """All the numbers of an input (a tensor or a tuple of tensors) as one float64 vector."""
    parts = x if isinstance(x, tuple) else (x,)
    return torch.cat([t.double().reshape(-1) for t in parts])


def max_error(got: torch.Tensor, want: torch.Tensor) -> float:
    """max |got - want| / max(1, max |want|), in float64 on the CPU."""
    got, want = got.detach().double().cpu(), want.detach().double().cpu()
    assert got.shape == want.shape
    if got.numel() == 0:
        return 0.0
    return (got - want).abs().max().item() / max(1.0, want.abs().max().item())


# --- closed forms against autograd ----------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_closed_form_matches_autograd(case, dtype, device):
    arch, dev = arch_of(case), torch.device(device)
    tol = 1e-10 if dtype == torch.float64 else 1e-5
    for seed in SEEDS:
        x = _cast(arch.sample_input(seed), dtype, dev)
        auto = nqf.quadratic_expansion(arch.f, x, arch.p, units(arch), dtype=dtype, device=dev)
        closed = arch.expansion(x)
        assert closed.A.device.type == auto.A.device.type == dev.type
        assert auto.A.dtype == dtype
        for part in ("f0", "g", "A", "B"):
            err = max_error(getattr(auto, part), getattr(closed, part))
            assert err <= tol, f"{part} differs by {err:.3g} at seed {seed}"
        assert auto.zgz == arch.zgz


@pytest.mark.parametrize("case", [c for c in CASES if arch_of(c).zgz],
                         ids=[i for c, i in zip(CASES, IDS) if arch_of(c).zgz])
def test_structure_matrix_is_the_closed_form_under_zgz(case):
    arch = arch_of(case)
    x = arch.sample_input(4)
    A = nqf.structure_matrix(arch.f, x, arch.p, units(arch))
    assert max_error(A, arch.A(x)) <= 1e-12
    assert max_error(A, A.T) <= 1e-14


@pytest.mark.parametrize("case", [c for c, _ in GENERAL], ids=[i for _, i in GENERAL])
def test_structure_matrix_refuses_the_general_form(case):
    arch = arch_of(case)
    with pytest.raises(ValueError, match="quadratic_expansion"):
        nqf.structure_matrix(arch.f, arch.sample_input(), arch.p, units(arch))


# --- Theorem 1's hypotheses and the remainder -----------------------------------------------------

@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_permutation_symmetry_and_zgz_status(case):
    arch = arch_of(case)
    x = arch.sample_input(1)
    assert nqf.permutation_asymmetry(arch.f, x, arch.p) <= 1e-12
    assert nqf.satisfies_zgz(arch.f, x, arch.p) == arch.zgz


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_remainder_order(case):
    arch = arch_of(case)
    d = arch.n_units or 4
    fit = nqf.remainder_order(arch.f, arch.sample_input(2), W_random(arch.p, d), d=d)
    if arch.remainder_order is None:
        assert fit.exact and np.all(fit.relative <= 1e-12)
    else:
        assert not fit.exact
        assert abs(fit.slope - arch.remainder_order) < 0.15, f"slope {fit.slope:.3f}"


# --- architecture-specific claims of Chapter 2 ----------------------------------------------------

@pytest.mark.parametrize("kw", [{}, {"n_in": 2, "n_tokens": 5, "h": 3, "h_v": 1},
                                {"n_in": 4, "n_tokens": 3, "h": 1, "h_v": 3}])
def test_attention_quartic_term(kw):
    """f(sW) = s^2 Tr[M A] + s^4 sum_i T4_i + O(s^6), with T4 = h^{-1/2} v^T V Sigma_X K^T Q x."""
    arch = MultiHeadAttention(**kw)
    x, W = arch.sample_input(2), W_random(arch.p, 4, seed=5)
    quad = torch.einsum("pi,pq,qi->", W, arch.A(x), W).item()
    quartic = arch.quartic_term(W, x).sum().item()
    s = np.geomspace(3e-3, 1e-1, 8)
    ratio = np.array([(arch.f(si * W, x).item() - si**2 * quad) / (si**4 * quartic) for si in s])
    rest = np.abs(ratio - 1) * s**4 * abs(quartic)              # |f - s^2 Tr[MA] - s^4 T4|
    assert abs(np.polyfit(np.log(s), np.log(rest), 1)[0] - 6) < 0.15
    assert abs(ratio[0] - 1) < 1e-3                            # the constant is exactly 1
    assert arch.quartic_term(W, x).shape == (4,)


def test_attention_A_couples_only_values_through_the_mean_token():
    arch = MultiHeadAttention(n_in=3, n_tokens=4, h=2, h_v=2)
    (q, X), (q2, _) = arch.sample_input(0), arch.sample_input(1)
    A = arch.A((q, X))
    qk = 2 * arch.h * arch.n_in
    assert torch.count_nonzero(A[:qk]) == 0 and torch.count_nonzero(A[:, :qk]) == 0
    assert torch.equal(A, arch.A((q2, X)))                     # independent of the query
    W = W_random(arch.p, 3)
    _, _, V, v = arch.heads(W)
    direct = torch.einsum("dv,dvn,n->", v, V, X.mean(dim=1))
    assert math.isclose(torch.einsum("pi,pq,qi->", W, A, W).item(), direct.item(), rel_tol=1e-12)


@pytest.mark.parametrize("d", [2, 3, 5])
def test_qk_attention_f0_and_trace_formula(d):
    arch = make_architecture("qk_attention", n_in=3, n_tokens=6, h=2, n_heads=d)
    q, X, y = arch.sample_input(3)
    assert math.isclose(arch.f(torch.zeros(arch.p, d, dtype=torch.float64), (q, X, y)).item(),
                        d * y.mean().item(), rel_tol=1e-14)
    assert math.isclose(arch.f0((q, X, y)).item(), d * y.mean().item(), rel_tol=1e-14)
    W = W_random(arch.p, d)
    hn = arch.h * arch.n_in
    Q, K = W[:hn].T.reshape(d, arch.h, arch.n_in), W[hn:].T.reshape(d, arch.h, arch.n_in)
    c = (X - X.mean(dim=1, keepdim=True)) @ y / X.shape[1]
    direct = ((K @ c) * (Q @ q)).sum() / math.sqrt(arch.h)    # h^{-1/2} sum_i (K_i c).(Q_i x)
    trace = torch.einsum("pi,pq,qi->", W, arch.A((q, X, y)), W)
    assert math.isclose(trace.item(), direct.item(), rel_tol=1e-12)


def test_qk_attention_A_vanishes_for_constant_labels_or_tokens():
    arch = make_architecture("qk_attention")
    q, X, y = arch.sample_input(0)
    const_tokens = X[:, :1].expand_as(X).clone()
    for x in [(q, X, torch.full_like(y, 0.7)), (q, const_tokens, y)]:
        assert arch.A(x).abs().max().item() < 1e-15
        assert nqf.structure_matrix(arch.f, x, arch.p).abs().max().item() < 1e-15


def test_softmax_moe_closed_forms_depend_on_the_number_of_experts():
    x = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64)
    Oxx = nqf.offdiag(torch.outer(x, x))
    for d in (2, 4):
        arch = make_architecture("moe", gate="softmax", n_experts=d)
        exp = nqf.quadratic_expansion(arch.f, x, arch.p, d)
        assert max_error(exp.A, Oxx / d) < 1e-14 and max_error(exp.B, -Oxx / d**2) < 1e-14
        assert max_error(exp.g, torch.cat([0 * x, x / d])) < 1e-14
    wrong_d = nqf.quadratic_expansion(arch.f, x, arch.p, 2)
    assert max_error(wrong_d.A, arch.A(x)) > 0.01


def test_sigmoid_gate_over_neuron_experts_is_the_halved_mlp_at_second_order():
    """With experts a_i tanh(b_i^T x) the sigmoid gate keeps ZGZ and drops out of A: the
    second-order model is the two-layer network of (b_i, a_i) with readout sigma(0) = 1/2, and
    the gate enters at third order, (1/4) (r_i^T x) a_i (b_i^T x) per unit."""
    arch = make_architecture("moe", n_in=3, gate="sigmoid", expert="neuron")
    mlp = make_architecture("mlp", n_in=3, phi="tanh")
    x, W = arch.sample_input(5), W_random(arch.p, 4, seed=6)
    assert nqf.satisfies_zgz(arch.f, x, arch.p)
    A = nqf.structure_matrix(arch.f, x, arch.p)
    assert torch.count_nonzero(A[:3]) == 0 and torch.count_nonzero(A[:, :3]) == 0
    assert max_error(A[3:, 3:], mlp.A(x) / 2) < 1e-14
    r, b, a = W[:3], W[3:6], W[6]
    cubic = ((r.T @ x) * a * (b.T @ x)).sum().item() / 4
    for s in (1e-3, 1e-4):
        rest = arch.f(s * W, x).item() - s**2 * torch.einsum("pi,pq,qi->", W, A, W).item()
        assert abs(rest / (s**3 * cubic) - 1) < 50 * s          # next term: O(s^4)


def test_patch_matrix_agrees_with_conv1d():
    x = torch.randn(2, 7, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    u = torch.randn(4, 2, 3, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    conv = torch.nn.functional.conv1d(x[None], u)[0]          # (4, P): cross-correlation
    assert torch.allclose(u.reshape(4, -1) @ patch_matrix(x, 3), conv, atol=1e-14, rtol=0)
    circ = torch.nn.functional.conv1d(torch.cat([x, x[:, :2]], 1)[None], u)[0]
    assert torch.allclose(u.reshape(4, -1) @ patch_matrix(x, 3, "circular"), circ, atol=1e-14)
    assert patch_matrix(x, 3, "circular").shape == (6, 7)


@pytest.mark.parametrize("c_in, commute", [(1, True), (2, False)])
def test_circular_global_cnn_commutes_only_with_one_input_channel(c_in, commute):
    """Circular patches sum to (channel sums) kron 1_k: collinear across inputs iff C_in = 1."""
    arch = make_architecture("cnn", c_in=c_in, length=6, k=3, padding="circular")
    A1, A2 = arch.A(arch.sample_input(0)), arch.A(arch.sample_input(1))
    rel = ((A1 @ A2 - A2 @ A1).norm() / (A1.norm() * A2.norm())).item()
    assert (rel < 1e-14) == commute


# --- the registry ---------------------------------------------------------------------------------

def test_every_registered_architecture_is_tested():
    assert {name for name, _ in CASES} == set(ARCHITECTURES)


def test_registry_names_are_unique_and_documented():
    for name, cls in ARCHITECTURES.items():
        assert cls.name == name
        assert isinstance(cls.unit, str) and len(cls.unit) > 10
        assert "Chapter 2" in cls.__doc__ and "f(" in cls.__doc__
    assert len({cls for cls in ARCHITECTURES.values()}) == len(ARCHITECTURES)
    with pytest.raises(ValueError, match="'mlp' is already registered"):
        register(type("Clash", (TwoLayerMLP,), {"name": "mlp"}))
    assert ARCHITECTURES["mlp"] is TwoLayerMLP
    assert ARCHITECTURES["phase_retrieval"] is PhaseRetrieval
    assert ARCHITECTURES["symmetric_sensing"] is SymmetricSensing


def test_make_architecture_rejects_unknown_names():
    with pytest.raises(ValueError, match=r"argument `name`: expected one of \[.*'attention'.*\], "
                                         r"got 'transformer'"):
        make_architecture("transformer")


@pytest.mark.parametrize("name, kw, match", [
    ("cnn", {"readout": "max"}, "argument `readout`"),
    ("cnn", {"padding": "same"}, "argument `padding`"),
    ("cnn", {"k": 9, "length": 6}, "argument `k`"),
    ("attention", {"n_tokens": 1}, "argument `n_tokens`"),
    ("qk_attention", {"n_heads": 1}, "argument `n_heads`"),
    ("moe", {"gate": "top1"}, "argument `gate`"),
    ("moe", {"n_experts": 1}, "argument `n_experts`"),
    ("moe", {"expert": "relu"}, "argument `expert`"),
    ("moe", {"expert": "neuron", "gate": "softmax"}, "argument `gate`"),
    ("deep_linear", {"w3": ()}, "argument `w3`"),
    ("asymmetric_sensing", {"m": 0}, "argument `m`"),
])
def test_bad_parameters_are_refused(name, kw, match):
    with pytest.raises(ValueError, match=match):
        make_architecture(name, **kw)


def test_architectures_are_frozen_and_sample_inputs_are_seeded():
    arch = make_architecture("attention")
    with pytest.raises(dataclasses.FrozenInstanceError):
        arch.h = 5
    for name, kw in CASES:
        a = make_architecture(name, **kw)
        x1, x2 = a.sample_input(7), a.sample_input(7)
        assert torch.equal(flatten(x1), flatten(x2))
        assert isinstance(a.p, int) and a.p > 0


# --- many samples at once: the classes' batched forms against the per-sample methods -------------

def _stack(arch: Architecture, n: int, seed: int = 20):
    samples = [arch.sample_input(seed + i) for i in range(n)]
    if isinstance(samples[0], torch.Tensor):
        return torch.stack(samples), samples
    return tuple(torch.stack(parts) for parts in zip(*samples)), samples


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_batched_forms_and_predictor_equal_the_per_sample_methods(case):
    """batched_forms, predictor and batched_f of every registered architecture against A, g, B,
    f0 and f called one sample (and one run) at a time: the independent oracle of the fast
    paths (vectorised for the MLP, attention and the MoE, a loop or vmap otherwise)."""
    arch = arch_of(case)
    xs, samples = _stack(arch, 5)
    forms = arch.batched_forms(xs)
    for i, x in enumerate(samples):
        e = arch.expansion(x)
        assert max_error(forms.A[i], e.A) <= 1e-14
        assert max_error(forms.f0[i], e.f0) <= 1e-14
        assert max_error(torch.zeros(arch.p) if forms.g is None else forms.g[i], e.g) <= 1e-14
        assert max_error(torch.zeros(arch.p, arch.p) if forms.B is None else forms.B[i],
                         e.B) <= 1e-14
    d = units(arch) + 1 if arch.n_units is None else arch.n_units
    W = torch.stack([0.4 * W_random(arch.p, d, seed=s) for s in (1, 2, 3)])    # (R, p, d)
    one = torch.stack([arch.f(W[0], x) for x in samples])
    assert max_error(arch.predictor(xs)(W[0]), one) <= 1e-13
    assert max_error(arch.batched_f(W[0], xs), one) <= 1e-13
    many = torch.stack([torch.stack([arch.f(w, x) for x in samples]) for w in W])
    assert max_error(arch.predictor(xs)(W), many) <= 1e-13


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_methods_refuse_an_input_of_the_wrong_shape(case):
    """A(x) of an input one entry too long (or a tuple one element short) raises naming `x` and
    the architecture; before, mlp(n_in=3).A(randn(5)) returned a 6 x 6 matrix."""
    arch = arch_of(case)
    x = arch.sample_input(0)
    bad = (torch.cat([x, x[:1]]) if isinstance(x, torch.Tensor) and x.ndim == 1 else
           torch.cat([x, x[:1]], dim=0) if isinstance(x, torch.Tensor) else x[:-1])
    for method in (arch.A, arch.g, arch.B, arch.f0, arch.expansion):
        with pytest.raises((ValueError, TypeError), match=rf"argument `x`.*{arch.name}"):
            method(bad)
    with pytest.raises(ValueError, match=rf"argument `W`: .*p = {arch.p}"):
        arch.f(W_random(arch.p + 1, 2), x)


def test_the_reported_cases_are_refused():
    with pytest.raises(ValueError, match=r"argument `x`: the input x of mlp.*expected shape "
                                         r"\(3,\), got \(5,\)"):
        make_architecture("mlp", n_in=3).A(torch.randn(5, dtype=torch.float64))
    with pytest.raises(ValueError, match="argument `n_in`"):
        PhaseRetrieval(n_in=-1)
    with pytest.raises(TypeError, match="argument `n`"):
        make_architecture("symmetric_sensing", n="3")
    with pytest.raises(TypeError, match="argument `x`: expected the index pair"):
        make_architecture("matrix_completion").A(torch.tensor([0.5, 1.0]))
    with pytest.raises(ValueError, match="argument `k`"):
        patch_matrix(torch.randn(2, 7), k=0)
    with pytest.raises(ValueError, match="argument `padding`"):
        patch_matrix(torch.randn(2, 7), k=3, padding="bogus")


def test_f_follows_the_dtype_of_W():
    """A float32 W with a float64 input computes in float32 (the input is cast), as torch would
    refuse the mixed product."""
    attn = make_architecture("attention")
    W = W_random(attn.p, 3).float()
    out = attn.f(W, attn.sample_input(0))
    assert out.dtype == torch.float32
    assert abs(out.item() - attn.f(W.double(), attn.sample_input(0)).item()) < 1e-5


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_the_checked_module_runs_under_vmap(case):
    """arch.f checks its arguments and still runs under torch.func.vmap over samples and runs
    (train_module vmaps a module; a check that vmap cannot trace would fall back to a loop)."""
    arch = arch_of(case)
    xs, samples = _stack(arch, 4)
    W = W_random(arch.p, units(arch), seed=4)
    over_samples = torch.func.vmap(arch.f, in_dims=(None, 0))
    assert max_error(over_samples(W, xs), torch.stack([arch.f(W, x) for x in samples])) <= 1e-13
    runs = torch.stack([W, 2 * W])
    both = torch.func.vmap(over_samples, in_dims=(0, None))(runs, xs)
    assert max_error(both[1], torch.stack([arch.f(2 * W, x) for x in samples])) <= 1e-13
