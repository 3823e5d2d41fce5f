"""The OpInfo family: registry cases made from PyTorch's own OpInfo database
(``torch.testing._internal.common_methods_invocations.op_db``), whose sample
inputs cover dtypes, broadcasting, edge sizes and keyword variants.

Not a ``cases_*.py`` module, so the hand-written registry never imports
op_db (about 4 s, and ``expecttest``); ``python -m tests.registry.run --opinfo
sample|full`` and ``test_registry.py`` use :func:`opinfo_cases`.

Which OpInfos: those whose ATen op has an overload tagged ``torch.Tag.core``.
The ATen op is ``torch.ops.aten.<aten_name>`` (an OpInfo's ``aten_name``
defaults to its ``name``); where that is a Python path, it is spelt as ATen
spells that namespace: ``nn.functional.X`` -> ``aten.X``, ``special.X`` ->
``aten.special_X``, ``linalg.X`` -> ``aten.linalg_X``, ``fft.X`` ->
``aten.fft_X``. Any other dotted name (``sparse.mm``, ``signal.windows.*``,
``torch.ops.aten._safe_softmax.default``) and names that are no ATen op
(``__radd__``, the conversion methods ``float``, ``int``, ...) are left out.
Every variant of a selected OpInfo (``div.floor_rounding``, ``pad.constant``)
is selected with it. Only OpInfo's function variant (``op.op``) is called:
forward, inference, ``requires_grad=False``, device ``cpu``.

Dtypes: ``op.supported_dtypes('cpu')`` intersected with the registry's
twelve (:data:`DTYPES`: ten real ones, complex64 and complex128); the rest
(uint16, ...) are counted as skipped, not made into cases. For each (OpInfo, dtype), torch, ``random``
and numpy are seeded with ``zlib.crc32(f"{op.name}.{op.variant_test_name}.
{dtype}")`` before the OpInfo's sample generator runs (what
``op.sample_inputs('cpu', dtype, requires_grad=False)`` calls, minus its
tracking wrapper: see :func:`_samples`), so the samples are the same on
every run. Sample ``i`` becomes the case
``opinfo.<op.name>[.<variant>].<f32|i64|...>.<i>`` (``i`` counts every
sample, skipped or not, so names do not move when a skip rule changes). The
tensor leaves of ``(input, args, kwargs)`` (pytree-flattened) are the
module's inputs; every other leaf (shapes, dims, scalars, dtypes, rounding
modes) is baked into the module.

Skipped, and counted per reason (:class:`Selection.skipped`): samples that
eager rejects, samples whose output is not a tensor or a tuple/list of
tensors (or holds no tensor), and ops whose values are unspecified (random
or uninitialised: :data:`UNSPECIFIED_OUTPUT`).

Indices with ties: topk's indices, and sort's/argsort's unless
``stable=True``, may order equal values any way (eager's own order differs
between its algorithms); they are compared by the values they pick
(:class:`~tests.registry.registry.IndexTies`), not element by element.

Eigenvectors and singular vectors: linalg.eigh's, linalg.svd's and
torch.svd's, each defined up to its sign (a complex one's phase), are
compared up to it (:class:`~tests.registry.registry.SignFree`). A complete
SVD of a non-square matrix is compared by its unique parts
(``_UNIQUE_PARTS``): the columns past min(m, n), any orthonormal basis of
the complement, give way to the projector onto it.

Tolerances: the registry's per-output-dtype ``TOLERANCES`` (f64 1e-9/1e-9,
f32 1e-4/1e-5, f16 2e-3/1e-3, bf16 1.6e-2/1e-2; integers and bool exact), no
per-op overrides.

``sample`` is a fixed, seeded selection of :data:`SAMPLE_SIZE` cases for CI
(:func:`select`): one case of every OpInfo (variant) first, then one of
each of its other dtypes, then further samples, in an order fixed by
``crc32(f"{SAMPLE_SEED}:{name}")``. An xfail
table may name any sample (:attr:`Enumeration.names`), so a sample run checks
only its own entries.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import os
import random
import warnings
import zlib
from typing import Any, Callable

import torch
import torch.nn as nn
from torch.utils import _pytree as pytree

from tests.registry.registry import DTYPE_NAMES, Case, IndexTies, InputSpec, SignFree

__all__ = ["DTYPES", "SAMPLE_SIZE", "SAMPLE_SEED", "Candidate", "Enumeration",
           "OpInfoModule", "Selection", "aten_name", "enumerate_opinfo", "opinfo_cases",
           "select", "selected_opinfos"]

FAMILY = "opinfo"

#: The dtypes Kiln has (the registry's twelve), in the order cases are made.
DTYPES = (torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64,
          torch.int32, torch.int16, torch.int8, torch.uint8, torch.bool,
          torch.complex64, torch.complex128)

#: OpInfos whose output values are unspecified: random numbers (randn) or
#: uninitialised memory (empty, empty_strided). Nothing to compare with
#: eager.
UNSPECIFIED_OUTPUT = frozenset({"randn", "empty", "empty_strided"})

#: OpInfos whose samples with ``training=True`` draw random numbers (rrelu's
#: slopes): those samples' values are unspecified too. The registry's
#: rrelu_train_stats case checks the distribution instead.
RANDOM_WHEN_TRAINING = frozenset({"nn.functional.rrelu"})

#: OpInfos whose samples that grow their input leave the new elements
#: uninitialised (Kiln's are zeros; tests/e2e/test_e2e_views.py checks them).
RESIZES = frozenset({"resize_", "resize_as_"})


def _unspecified_sample(op: Any, sample: Any) -> bool:
    """Whether one sample's output values are unspecified: random (rrelu in
    training) or uninitialised (a resize that grows its input)."""
    if op.name in RANDOM_WHEN_TRAINING:
        return sample.kwargs.get("training") is True
    if op.name in RESIZES:
        size = sample.args[0]
        count = size.numel() if isinstance(size, torch.Tensor) else \
            int(torch.Size(size).numel())
        return count > sample.input.numel()
    return False

#: ATen's spelling of the Python namespaces OpInfo names use.
_NAMESPACES = (("nn.functional.", ""), ("special.", "special_"), ("linalg.", "linalg_"),
               ("fft.", "fft_"))

#: The CI sample: this many cases, drawn by :func:`select` in an order fixed
#: by a hash of SAMPLE_SEED and the names (sized for 3-5 minutes per target
#: on a 2-core machine through kilnd, see docs/testing.md).
SAMPLE_SIZE = 300
SAMPLE_SEED = 15


def aten_name(op: Any) -> str:
    """The ATen op name of an OpInfo ("" when its name maps to none)."""
    name = op.aten_name or op.name
    if "." in name:
        for prefix, spelling in _NAMESPACES:
            rest = name[len(prefix):]
            if name.startswith(prefix) and rest.isidentifier():
                return spelling + rest
        return ""
    return name if name.isidentifier() else ""


def is_core(name: str) -> bool:
    """Whether ``torch.ops.aten.<name>`` has an overload tagged core."""
    if not name or name.startswith("__"):
        return False
    try:
        packet = getattr(torch.ops.aten, name)
    except (AttributeError, RuntimeError):
        return False
    if not isinstance(packet, torch._ops.OpOverloadPacket):
        return False
    return any(torch.Tag.core in getattr(packet, o).tags for o in packet.overloads())


@functools.lru_cache(maxsize=1)
def op_db() -> tuple:
    from torch.testing._internal.common_methods_invocations import op_db as db
    return tuple(db)


#: Set to 1, the family covers the OpInfos of every ATen op, core or not:
#: an exploration run (the xfail tables hold core ops only, so run it
#: without --update-xfail and read its failures).
BEYOND_CORE_ENV = "KILN_OPINFO_BEYOND_CORE"


def selected_opinfos() -> list:
    """The OpInfos of core ATen ops, in op_db's order (of every ATen op
    under KILN_OPINFO_BEYOND_CORE=1)."""
    if os.environ.get(BEYOND_CORE_ENV) == "1":
        return [op for op in op_db()
                if aten_name(op) and not aten_name(op).startswith("__")]
    return [op for op in op_db() if is_core(aten_name(op))]


def _op_label(op: Any) -> str:
    return op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")


def _seed(op: Any, dtype: torch.dtype) -> int:
    return zlib.crc32(f"{op.name}.{op.variant_test_name}.{dtype}".encode())


def _samples(op: Any, dtype: torch.dtype) -> list:
    seed = _seed(op, dtype)
    torch.manual_seed(seed)
    random.seed(seed)
    try:
        import numpy
        numpy.random.seed(seed)
    except ImportError:  # pragma: no cover - numpy is in requirements.txt
        pass
    # op.sample_inputs("cpu", dtype, requires_grad=False) without the
    # TrackedInputIter it wraps the samples in: that re-seeds torch with
    # OpInfo's one global SEED before every sample (our seed would not count)
    # and inspects the stack twice per call (~0.1 s each, 1,100 calls).
    return list(op.sample_inputs_func(op, "cpu", dtype, False))


class OpInfoModule(nn.Module):
    """Calls ``fn(input, *args, **kwargs)`` of one SampleInput with its tensor
    leaves taken from the module's inputs and every other leaf baked in."""

    def __init__(self, fn: Callable[..., Any], spec: Any, leaves: list, positions: tuple,
                 unique: Callable[[Any], Any] | None = None):
        super().__init__()
        self.fn = fn
        self.unique = unique          # the parts of the output that are unique
        self.spec = spec
        self.leaves = leaves          # non-tensor leaves; tensors are placeholders
        self.positions = positions    # where each input goes among the leaves

    def forward(self, *tensors: torch.Tensor) -> Any:
        leaves = list(self.leaves)
        for pos, t in zip(self.positions, tensors):
            leaves[pos] = t
        inp, args, kwargs = pytree.tree_unflatten(leaves, self.spec)
        out = self.fn(inp, *args, **kwargs)
        return self.unique(out) if self.unique is not None else out


def _split(sample: Any) -> tuple[Any, list, tuple, tuple]:
    """(spec, non-tensor leaves, tensor positions, tensors) of a SampleInput."""
    leaves, spec = pytree.tree_flatten((sample.input, tuple(sample.args), dict(sample.kwargs)))
    positions = tuple(i for i, x in enumerate(leaves) if isinstance(x, torch.Tensor))
    tensors = tuple(leaves[i].detach() for i in positions)
    baked = [None if isinstance(x, torch.Tensor) else x for x in leaves]
    return spec, baked, positions, tensors


def _tensor_input(t: torch.Tensor) -> InputSpec:
    text = f"{DTYPE_NAMES.get(t.dtype, str(t.dtype))}[{','.join(map(str, t.shape))}]"
    return InputSpec(text, lambda g: t.clone())


def _output_problem(out: Any) -> str:
    """Why an eager output is no Kiln output ("" when it is one)."""
    if isinstance(out, torch.Tensor):
        return ""
    if isinstance(out, (tuple, list)):  # torch.return_types are tuples too
        leaves = pytree.tree_leaves(out)
        if leaves and all(isinstance(x, torch.Tensor) for x in leaves):
            return ""
    return "output is not a tensor or a tuple of tensors"


@dataclasses.dataclass
class Candidate:
    """One OpInfo sample before eager has seen it."""

    name: str
    group: tuple[str, str]        # (OpInfo label, dtype name)
    op: Any
    sample: Any
    _checked: tuple[Case | None, str] | None = None

    def check(self) -> tuple[Case | None, str]:
        """(the case, "") or (None, why the sample is skipped); eager runs once."""
        if self._checked is None:
            self._checked = self._check()
        return self._checked

    def _check(self) -> tuple[Case | None, str]:
        spec, baked, positions, tensors = _split(self.sample)
        fn = self.op.op
        unique = _UNIQUE_PARTS.get(self.op.name)
        try:
            with torch.no_grad(), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out = OpInfoModule(fn, spec, baked, positions, unique)(*(t.clone() for t in tensors))
        except Exception:  # noqa: BLE001 - eager rejects the sample
            return None, "eager rejects the sample"
        problem = _output_problem(out)
        if problem:
            return None, problem

        def make() -> nn.Module:
            return OpInfoModule(fn, spec, baked, positions, unique)
        return Case(self.name, FAMILY, make, tuple(_tensor_input(t) for t in tensors),
                    index_ties=_index_ties(self.op.name, self.sample),
                    sign_free=_SIGN_FREE.get(self.op.name, ())), ""


#: Outputs of unit vectors whose sign (a complex one's phase) PyTorch leaves
#: unspecified, compared up to it: linalg.eigh's and linalg.eig's
#: eigenvectors (columns), and singular vectors: linalg.svd's U (columns)
#: and Vh (rows), torch.svd's U and V (columns). U's and V's are turned
#: apart (the hand-written registry cases check U diag(S) Vh = A).
_SIGN_FREE = {"linalg.eigh": (SignFree(output=1, dim=-2),),
              "linalg.eig": (SignFree(output=1, dim=-2),),
              "linalg.svd": (SignFree(output=0, dim=-2), SignFree(output=2, dim=-1)),
              "svd": (SignFree(output=0, dim=-2), SignFree(output=2, dim=-2))}


def _complete_svd_parts(u: torch.Tensor, s: torch.Tensor, v: torch.Tensor, v_rows: bool
                        ) -> tuple[torch.Tensor, ...]:
    """U, S and V (V^H's rows when ``v_rows``) of a complete SVD of a
    non-square matrix with their columns past k = len(S) replaced by the
    projector onto their span: any orthonormal basis of A's complement is
    eager's, only that projector is unique."""
    k = s.shape[-1]
    if u.shape[-1] == k and v.shape[-2 if v_rows else -1] == k:
        return u, s, v
    uc = u[..., k:]
    vc = v[..., k:, :].mH if v_rows else v[..., :, k:]
    v_kept = v[..., :k, :] if v_rows else v[..., :, :k]
    return u[..., :k], s, v_kept, uc @ uc.mH, vc @ vc.mH


#: Ops whose output is compared by its unique parts, eager's and Kiln's
#: alike: the complete SVD's columns past min(m, n).
_UNIQUE_PARTS: dict[str, Callable[[Any], Any]] = {
    "linalg.svd": lambda out: _complete_svd_parts(*out, v_rows=True),
    "svd": lambda out: _complete_svd_parts(*out, v_rows=False),
}


def _index_ties(name: str, sample: Any) -> IndexTies | None:
    """Where the op's indices may order equal values as they like: topk (any
    order among ties), sort/argsort unless ``stable=True`` (eager's
    unstable sort orders long rows of ties differently from a stable one)
    and mode (the index of any occurrence of the value: eager's is the one
    its unstable sort leaves last)."""
    args, kwargs = tuple(sample.args), dict(sample.kwargs)

    def arg(pos: int, key: str, default: Any) -> Any:
        return args[pos] if len(args) > pos else kwargs.get(key, default)

    if name in ("topk", "mode"):
        return IndexTies(output=1, input=0, dim=arg(1 if name == "topk" else 0, "dim", -1))
    if name in ("sort", "argsort") and not kwargs.get("stable", False):
        return IndexTies(output=1 if name == "sort" else 0, input=0, dim=arg(0, "dim", -1))
    return None


@dataclasses.dataclass
class Enumeration:
    """Every sample of every selected OpInfo and dtype, in name order, before
    eager has run any; and the (op, dtype) pairs left out."""

    candidates: list[Candidate]
    #: "other dtypes" / "sample_inputs raised" -> (op, dtype) pairs
    skipped_pairs: collections.Counter
    #: samples of ops in UNSPECIFIED_OUTPUT, per reason
    skipped_samples: collections.Counter

    @property
    def names(self) -> set[str]:
        """Every sample's name: what an xfail table may list."""
        return {c.name for c in self.candidates}


@dataclasses.dataclass
class Selection:
    """The cases of a selection and the samples it skipped, per reason."""

    cases: list[Case]
    skipped: dict[str, int]


@functools.lru_cache(maxsize=1)
def enumerate_opinfo() -> Enumeration:
    """Every sample of every selected OpInfo and dtype (cached)."""
    candidates: list[Candidate] = []
    pairs: collections.Counter = collections.Counter()
    samples_skipped: collections.Counter = collections.Counter()
    for op in selected_opinfos():
        supported = op.supported_dtypes("cpu")
        pairs["other dtypes"] += sum(d not in DTYPES for d in supported)
        label = _op_label(op)
        for dtype in DTYPES:
            if dtype not in supported:
                continue
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    samples = _samples(op, dtype)
            except Exception:  # noqa: BLE001 - OpInfo's own generator failing
                pairs["sample_inputs raised"] += 1
                continue
            if op.name in UNSPECIFIED_OUTPUT:
                samples_skipped["output values unspecified (random/uninitialised)"] += \
                    len(samples)
                continue
            unspecified = [_unspecified_sample(op, s) for s in samples]
            if any(unspecified):
                samples_skipped["output values unspecified (random/uninitialised)"] += \
                    sum(unspecified)
            dt = DTYPE_NAMES[dtype]
            candidates += [Candidate(f"{FAMILY}.{label}.{dt}.{i}", (label, dt), op, s)
                           for i, (s, skip) in enumerate(zip(samples, unspecified))
                           if not skip]
    names = [c.name for c in candidates]
    if len(set(names)) != len(names):
        dup = collections.Counter(names).most_common(1)[0][0]
        raise ValueError(f"opinfo: case {dup!r} is made twice")
    bad = [n for n in names if any(ch.isspace() or ch == "#" for ch in n)]
    if bad:
        raise ValueError(f"opinfo: case name {bad[0]!r} has a space or '#'")
    return Enumeration(sorted(candidates, key=lambda c: c.name), pairs, samples_skipped)


def _rank(key: str, seed: int) -> int:
    return zlib.crc32(f"{seed}:{key}".encode())


def _sample_order(enum: Enumeration, seed: int) -> list[list[Candidate]]:
    """Per OpInfo (variant), in seeded order, its samples in the order the CI
    sample draws them: the seeded-first sample of each of its dtypes (dtypes
    in seeded order), then the second of each, and so on."""
    by_op: dict[str, dict[str, list[Candidate]]] = collections.defaultdict(
        lambda: collections.defaultdict(list))
    for c in enum.candidates:
        by_op[c.group[0]][c.group[1]].append(c)
    orders = []
    for label in sorted(by_op, key=lambda k: _rank(k, seed)):
        groups = [sorted(members, key=lambda c: _rank(c.name, seed)) for _, members in
                  sorted(by_op[label].items(), key=lambda kv: _rank(f"{label}.{kv[0]}", seed))]
        depth = max(len(m) for m in groups)
        orders.append([m[i] for i in range(depth) for m in groups if i < len(m)])
    return orders


@functools.lru_cache(maxsize=4)
def select(selection: str, size: int = SAMPLE_SIZE, seed: int = SAMPLE_SEED) -> Selection:
    """The cases of ``selection``: "full" (every sample eager accepts) or
    "sample": ``size`` cases drawn in rounds, each OpInfo (variant) giving
    its next case in :func:`_sample_order` per round (ops in seeded order), so
    every op comes first, then every op's dtypes, then more samples. Samples
    eager rejects are passed over; only those looked at count as skipped."""
    enum = enumerate_opinfo()
    skipped = collections.Counter({f"{k} ((op, dtype) pairs)": v
                                   for k, v in enum.skipped_pairs.items() if v})
    skipped.update(enum.skipped_samples)
    cases: list[Case] = []

    def take(cand: Candidate) -> bool:
        case, why = cand.check()
        if case is None:
            skipped[why] += 1
            return False
        cases.append(case)
        return True

    if selection == "full":
        for cand in enum.candidates:
            take(cand)
    elif selection == "sample":
        queues = [iter(order) for order in _sample_order(enum, seed)]
        while queues and len(cases) < size:
            for queue in list(queues):
                if len(cases) >= size:
                    break
                if not any(take(cand) for cand in queue):  # exhausted
                    queues.remove(queue)
    else:
        raise ValueError(f"opinfo selection {selection!r} is not 'sample' or 'full'")
    return Selection(sorted(cases, key=lambda c: c.name), dict(skipped))


def opinfo_cases(selection: str) -> list[Case]:
    """The cases of ``selection``: "sample" (CI's) or "full" (every one)."""
    return list(select(selection).cases)
