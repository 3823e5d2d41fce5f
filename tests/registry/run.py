"""Runs the op-level registry through a real kilnd for one target.

    python -m tests.registry.run --target cpu --start-kilnd
    python -m tests.registry.run --target riscv64 --address 127.0.0.1:50051 -k conv
    python -m tests.registry.run --target cpu --start-kilnd --update-xfail
    python -m tests.registry.run --target cpu --opinfo sample   # OpInfo family
    python -m tests.registry.run --target cpu,riscv64             # exported once, run on both

Each case is built (seeded), run eagerly, exported with torch.export and
decomposed to core ATen here (one case at a time: export is not thread-safe),
then compiled by kilnd for the target and executed by its agent on a thread
pool, and every output (then every input as the call left it: programs may
mutate their inputs) is compared with eager at the case's tolerances.
Expected failures are read from ``tests/registry/xfail/<target>.txt``;
strict: a listed case that passes is an unexpected pass (XPASS). Exit status
is 1 when any case fails unexpectedly or passes unexpectedly.

``--opinfo sample|full`` runs the OpInfo family (tests/registry/opinfo.py:
PyTorch's OpInfo samples of the core ATen ops) instead of the hand-written
cases, against its own table, ``tests/registry/xfail/opinfo-<target>.txt``.
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import copy
import dataclasses
import fnmatch
import logging
import os
import pathlib
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from typing import Any, Callable, Iterable, Sequence

import torch
from torch.utils import _pytree as pytree

import kiln
from kiln.export import serialize_exported
from tests.registry.registry import Case, all_cases, tolerance_for

XFAIL_DIR = pathlib.Path(__file__).resolve().parent / "xfail"
REPO = pathlib.Path(__file__).resolve().parents[2]

PASSED, FAILED, XFAIL, XPASS = "passed", "failed", "xfail", "xpass"
#: How long a failed case waits to see whether kilnd is exiting.
CRASH_WAIT_S = 2.0
#: How long a started kilnd may take to list a device of every target.
DEVICE_WAIT_S = 60.0
#: The local agent kinds kilnd starts (--local-agents) for a target's devices;
#: targets not listed run on kilnd's default local agent (cpu).
LOCAL_AGENTS = {"cpu": ("cpu",), "riscv64": ("cpu", "qemu")}


def local_agent_args(targets: Sequence[str], extra_args: Sequence[str]) -> tuple[str, ...]:
    """``--local-agents`` for ``targets``, unless the caller gave one."""
    if any(a.startswith("--local-agents") for a in extra_args):
        return ()
    kinds: list[str] = []
    for t in targets:
        kinds += [k for k in LOCAL_AGENTS.get(t, ("cpu",)) if k not in kinds]
    return () if kinds == ["cpu"] else ("--local-agents", ",".join(kinds))


@dataclasses.dataclass(frozen=True)
class Suite:
    """What a run draws its cases from and checks them against: the
    hand-written registry (:data:`REGISTRY`) or the OpInfo family
    (:func:`opinfo_suite`)."""

    #: "" for the registry; else the family, which prefixes the table's file
    #: name (xfail/<label>-<target>.txt) and the summary line.
    label: str
    cases: Callable[[], list[Case]]
    #: Every case name the table may list (others are stale).
    known: Callable[[], set[str]]
    #: Whether a run without -k/--family covers the whole table; when not
    #: (the OpInfo sample) --update-xfail rewrites only the run's entries.
    whole: bool = True
    noun: str = "cases"
    #: Reason -> count of what the selection left out (shown in the summary).
    skipped: Callable[[], dict[str, int]] = dict

    def table(self, target: str) -> str:
        """The xfail table's name: xfail/<table>.txt."""
        return f"{self.label}-{target}" if self.label else target


REGISTRY = Suite("", all_cases, lambda: {c.name for c in all_cases()})

#: --opinfo's choices (and KILN_REGISTRY_OPINFO's for test_registry.py).
OPINFO_CHOICES = ("none", "sample", "full")


def opinfo_suite(selection: str) -> Suite:
    """The OpInfo family's ``selection``: "sample" (CI's fixed, seeded
    selection) or "full"; "none" is the hand-written registry."""
    if selection == "none":
        return REGISTRY
    if selection not in OPINFO_CHOICES:
        raise ValueError(f"--opinfo {selection!r}: not one of {', '.join(OPINFO_CHOICES)}")
    from tests.registry import opinfo  # imports op_db: only when asked for
    return Suite("opinfo", lambda: opinfo.opinfo_cases(selection),
                 lambda: opinfo.enumerate_opinfo().names, whole=selection == "full",
                 noun="samples", skipped=lambda: opinfo.select(selection).skipped)


@dataclasses.dataclass
class Result:
    case: Case
    status: str = ""
    #: "", or where it went wrong: eager, export, serialize (core-ATen
    #: decomposition and the client's serialiser), compile, run, compare.
    phase: str = ""
    error: str = ""
    seconds: float = 0.0
    #: kilnd died while this case was in flight: run it again, alone.
    retry: bool = False

    @property
    def ok(self) -> bool:
        return not self.error

    @property
    def missing_op(self) -> str:
        m = re.search(r"unsupported op '([^']+)'", self.error)
        return m.group(1) if m else ""

    @property
    def group(self) -> str:
        """What failing results are grouped by: the missing op, else the error
        less what differs between cases (node names, shapes, mismatch detail)."""
        if self.missing_op:
            return self.missing_op
        why = self.error
        for pattern, replacement in _GROUP_REWRITES:
            why = pattern.sub(replacement, why)
        return f"{self.phase}: {_short(why, 160)}"


@dataclasses.dataclass
class Summary:
    target: str
    results: list[Result]
    stale_xfails: list[str]
    seconds: float
    suite: Suite = REGISTRY
    #: Reason -> count of what the selection skipped (not cases).
    skipped: dict[str, int] = dataclasses.field(default_factory=dict)

    @property
    def table(self) -> str:
        return self.suite.table(self.target)

    @property
    def name(self) -> str:
        return f"{self.suite.label} {self.target}" if self.suite.label else self.target

    def count(self, status: str) -> int:
        return sum(r.status == status for r in self.results)

    @property
    def unexpected(self) -> list[Result]:
        return [r for r in self.results if r.status in (FAILED, XPASS)]

    @property
    def ok(self) -> bool:
        return not self.unexpected and not self.stale_xfails

    def line(self) -> str:
        skipped = "".join(f"; skipped {n} ({why})" for why, n in
                          sorted(self.skipped.items(), key=lambda kv: (-kv[1], kv[0])))
        return (f"{self.name}: {len(self.results)} {self.suite.noun}, "
                f"{self.count(PASSED)} passed, {self.count(XFAIL)} xfail, "
                f"{self.count(FAILED)} failed, {self.count(XPASS)} xpass{skipped}")

    def report(self, verbose: bool = False) -> str:
        out = []
        for r in sorted(self.unexpected, key=lambda r: r.case.name):
            if r.status == FAILED:
                out.append(f"FAILED {r.case.name} [{r.phase}]: {r.error}")
            else:
                out.append(f"XPASS  {r.case.name}: passes but is listed in "
                           f"xfail/{self.table}.txt")
        for name in self.stale_xfails:
            out.append(f"STALE  {name}: listed in xfail/{self.table}.txt but no such case")
        groups: dict[str, list[str]] = collections.defaultdict(list)
        for r in self.results:
            if r.status in (XFAIL, FAILED):
                groups[r.group].append(r.case.name)
        if groups:
            out.append(f"{self.name}: failing {self.suite.noun} (xfail + failed) by missing "
                       "op or error:")
            for key, names in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
                shown = ", ".join(names if verbose else names[:6])
                more = "" if verbose or len(names) <= 6 else f", ... (+{len(names) - 6})"
                out.append(f"  {len(names):4d}  {key}: {shown}{more}")
        out.append(self.line())
        out.append(f"{self.name}: registry run took {self.seconds:.1f} s")
        return "\n".join(out)


def _short(error: str, n: int = 90) -> str:
    return error if len(error) <= n else error[:n - 3] + "..."


_GROUP_REWRITES = [(re.compile(p), r) for p, r in (
    (r"cannot compile \d+ of \d+ nodes: ", "cannot compile: "),
    (r"node \d+ ('[^']*' )?\([^)]*\): ", ""),
    (r"input '[^']*' has shape \[[^\]]*\]", "an input has shape [..]"),
    (r"(differs from eager at rtol=\S+ atol=\S+):.*", r"\1"),
    (r"\. To run them on the host CPU instead.*", ""),
)]


# --- errors -------------------------------------------------------------------

_NOISE = [re.compile(p) for p in (
    r" \(request [0-9a-f]+\)",           # request ids change on every run
    r" \(rpc=[^)]*\)",                   # client context: address, rpc, graph
    r"127\.0\.0\.1:\d+",
)]
_REWRITES = [(re.compile(p), r) for p, r in (
    (r"[^\s:]*/kiln-registry-[^\s:]*", "<path>"),   # files in this run's temp dir
    (r"sha256:[0-9a-f]{64}(/\d+)?", "<digest>"),
    (r"\b[0-9a-f]{64}\b", "<digest>"),
)]


def first_line(error: BaseException | str) -> str:
    """A stable one-line reason: first line, no request ids or addresses."""
    text = error if isinstance(error, str) else (
        f"{type(error).__name__}: {error}" if not isinstance(error, kiln.KilnError)
        else str(error))
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), type(error).__name__)
    for pattern in _NOISE:
        line = pattern.sub("", line)
    for pattern, replacement in _REWRITES:
        line = pattern.sub(replacement, line)
    return line[:300]


# --- xfail tables ---------------------------------------------------------------

def xfail_path(target: str, suite: Suite = REGISTRY) -> pathlib.Path:
    return XFAIL_DIR / f"{suite.table(target)}.txt"


def read_xfails(target: str, suite: Suite = REGISTRY) -> dict[str, str]:
    """Case name → reason from ``xfail/<table>.txt`` (missing file: none)."""
    path = xfail_path(target, suite)
    if not path.exists():
        return {}
    table = {}
    for ln in path.read_text().splitlines():
        body, _, reason = ln.partition("#")
        name = body.strip()
        if name:
            table[name] = reason.strip()
    return table


def write_xfails(target: str, table: dict[str, str], suite: Suite = REGISTRY) -> None:
    if suite.label:
        lines = [f"# Expected failures of the {suite.label} family (tests/registry/"
                 f"{suite.label}.py) on target", f"# '{target}': one case per line, then "
                 "'# ' and the first line of its error. Strict:",
                 "# a listed case that passes fails the run. Regenerate with",
                 f"#   python -m tests.registry.run --target {target} --opinfo sample "
                 "--update-xfail",
                 "# (the CI sample's entries; others are kept), or --opinfo full (all)"]
    else:
        lines = [f"# Expected failures of the op registry on target '{target}': one case per",
                 "# line, then '# ' and the first line of its error. Strict: a listed case",
                 "# that passes fails the run. Regenerate with",
                 f"#   python -m tests.registry.run --target {target} --start-kilnd "
                 "--update-xfail"]
    width = max((len(n) for n in table), default=0)
    lines += [f"{name.ljust(width)}  # {table[name]}" for name in sorted(table)]
    path = xfail_path(target, suite)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")


# --- one case -------------------------------------------------------------------

def _copies(inputs: tuple) -> tuple:
    """Fresh copies of a case's inputs (a call may write into them)."""
    return tuple(t.clone() if isinstance(t, torch.Tensor) else t for t in inputs)


def compare(actual: Any, expected: Any, case: Case) -> None:
    """Raises AssertionError naming the first output that differs from eager
    (the outputs, then the inputs as the call left them)."""
    got = pytree.tree_leaves(actual)
    want = pytree.tree_leaves(expected)
    if len(got) != len(want):
        raise AssertionError(f"{len(got)} outputs, eager has {len(want)}")
    sign_free = {f.output: f.dim for f in case.sign_free}
    unordered = {u.output: u.dim for u in case.unordered}
    for i, (g, w) in enumerate(zip(got, want)):
        if not isinstance(w, torch.Tensor):  # a Python number the program returns
            if type(g) is not type(w):
                raise AssertionError(f"output {i} is a {type(g).__name__}, eager returns "
                                     f"a {type(w).__name__}")
            g, w = torch.tensor(g), torch.tensor(w)
        if not isinstance(g, torch.Tensor):
            raise AssertionError(f"output {i} is a {type(g).__name__}, not a tensor")
        if g.dtype != w.dtype:
            raise AssertionError(f"output {i} dtype {g.dtype}, eager {w.dtype}")
        if tuple(g.shape) != tuple(w.shape):
            raise AssertionError(f"output {i} shape {list(g.shape)}, eager {list(w.shape)}")
        rtol, atol = tolerance_for(w.dtype, case.rtol, case.atol)
        ties = case.index_ties
        if ties is not None and i == ties.output:
            _compare_tied_indices(g, w, pytree.tree_leaves(expected[1])[ties.input],
                                  ties.dim, i)
            continue
        if i in sign_free:  # each vector turned to agree with eager's
            dot = (g.conj() * w).sum(sign_free[i], keepdim=True)
            if g.is_complex():
                g = g * torch.where(dot.abs() > 0, dot / dot.abs(), 1.0).to(g.dtype)
            else:
                g = g * torch.where(dot < 0, -1.0, 1.0).to(g.dtype)
        if i in unordered:  # Kiln's values in the order of eager's nearest
            g = _paired_with(g, w, unordered[i])
        try:
            torch.testing.assert_close(g, w, rtol=rtol, atol=atol, equal_nan=True)
        except AssertionError as e:
            detail = " ".join(ln.strip() for ln in str(e).splitlines()[1:4] if ln.strip())
            raise AssertionError(f"output {i} ({w.dtype}) differs from eager at "
                                 f"rtol={rtol} atol={atol}: {detail}") from None


def _paired_with(got: torch.Tensor, want: torch.Tensor, dim: int) -> torch.Tensor:
    """``got`` reordered along ``dim`` so that each of ``want``'s values, in
    turn, faces the nearest value of ``got`` not yet taken (NaN is nearest
    to NaN)."""
    g, w = got.movedim(dim, -1), want.movedim(dim, -1)
    shape = g.shape
    g, w = g.reshape(-1, shape[-1]), w.reshape(-1, shape[-1])
    out = g.clone()
    for row in range(g.shape[0]):
        free = list(range(g.shape[1]))
        for k in range(g.shape[1]):
            candidates = g[row, free]
            dist = (candidates - w[row, k]).abs().to(torch.float64)
            both_nan = candidates.isnan() & w[row, k].isnan()
            dist = torch.where(both_nan, 0.0, torch.nan_to_num(dist, nan=float("inf")))
            j = free.pop(int(dist.argmin()))
            out[row, k] = g[row, j]
    return out.reshape(shape).movedim(-1, dim)


def _compare_tied_indices(got: torch.Tensor, want: torch.Tensor, source: torch.Tensor,
                          dim: int, i: int) -> None:
    """Output ``i``, indices into ``source`` along ``dim`` with the order among
    equal values unspecified: they must pick what eager's pick, each at most
    once per row (see :class:`IndexTies`)."""
    if source.dim() == 0:
        source, got, want, dim = source.reshape(1), got.reshape(1), want.reshape(1), 0
    dim = dim % source.dim()
    if got.dim() < source.dim():  # one index per row, the dim dropped (mode)
        got, want = got.unsqueeze(dim), want.unsqueeze(dim)
    extent = source.shape[dim]
    if got.numel() and (got.min() < 0 or got.max() >= extent):
        raise AssertionError(f"output {i} holds indices outside [0, {extent}) along dim {dim}")
    picked, wanted = source.gather(dim, got), source.gather(dim, want)
    try:
        torch.testing.assert_close(picked, wanted, rtol=0, atol=0, equal_nan=True)
    except AssertionError as e:
        detail = " ".join(ln.strip() for ln in str(e).splitlines()[1:4] if ln.strip())
        raise AssertionError(f"output {i} (indices) picks other values than eager's "
                             f"along dim {dim}: {detail}") from None
    ordered = got.movedim(dim, -1).sort(dim=-1).values
    if ordered.shape[-1] > 1 and bool((ordered[..., 1:] == ordered[..., :-1]).any()):
        raise AssertionError(f"output {i} (indices) names an index twice along dim {dim}")


@dataclasses.dataclass
class Prepared:
    """What the main thread makes for a case before it goes to the pool: made
    once, run on every target."""

    #: The case, with the eager/export phase and error when those failed.
    result: Result
    inputs: tuple = ()
    expected: Any = None
    serialized: Any = None
    out_spec: Any = None
    in_spec: Any = None
    #: The values, before any run, of the buffers the program updates
    #: (CallConvention.state): each execution starts from a copy of them.
    state: tuple = ()

    def drop(self) -> None:
        """Forgets the graph, inputs and eager outputs (nothing runs it again)."""
        self.inputs, self.expected, self.serialized = (), None, None


#: torch.export's strict mode (TorchDynamo) is ~2.5x slower on these small
#: modules than non-strict tracing and gives the same core-ATen graphs here;
#: --strict-export (or KILN_REGISTRY_STRICT_EXPORT=1) selects it.
STRICT_EXPORT = os.environ.get("KILN_REGISTRY_STRICT_EXPORT", "") == "1"


def prepare(case: Case) -> Prepared:
    """Eager reference and core-ATen export (main thread only)."""
    result = Result(case)
    t0 = time.perf_counter()
    prepared = Prepared(result)
    try:
        result.phase = "eager"
        module, inputs = case.build()
        # A program may update its buffers (train-mode batch norm): the
        # export starts from their values before eager's run.
        exported_module = copy.deepcopy(module) if next(module.buffers(), None) is not None \
            else module
        # Programs may change their inputs: eager runs on copies, and its
        # inputs afterwards are compared like outputs (see execute).
        eager_inputs = _copies(inputs)
        with torch.no_grad():
            expected = (module(*eager_inputs), eager_inputs)
        result.phase = "export"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ep = torch.export.export(exported_module, _copies(inputs), strict=STRICT_EXPORT)
            result.phase = "serialize"
            serialized, out_spec, in_spec = serialize_exported(ep, case.name)
        prepared.state = _copies(serialized.convention.state)
        prepared.inputs, prepared.expected = inputs, expected
        prepared.serialized, prepared.out_spec, prepared.in_spec = serialized, out_spec, in_spec
        result.phase = ""
    except Exception as e:  # noqa: BLE001 - every failure is a reported result
        result.error = first_line(e)
    result.seconds = time.perf_counter() - t0
    return prepared


def execute(prepared: Prepared, endpoint: "Endpoint", target: str,
            result: Result | None = None) -> Result:
    """Compile on kilnd, run on the target's agent, compare (any thread): a
    new result for ``target``, or ``result`` again when it is a retry.

    When kilnd dies while the case is in flight (and the runner owns it), the
    daemon is restarted and the result is marked for a serial retry, so one
    crashing case does not fail every case after it."""
    if result is None:
        result = dataclasses.replace(prepared.result)
    if result.error and not result.retry:
        return result
    result.error, result.phase, result.retry = "", "", False
    generation, client = endpoint.current()
    t0 = time.perf_counter()
    try:
        result.phase = "compile"
        compiled = client.compile_serialized(prepared.serialized, target=target,
                                             out_spec=prepared.out_spec,
                                             in_spec=prepared.in_spec)
        if prepared.state:  # each target's run updates buffers of its own
            compiled.convention = dataclasses.replace(compiled.convention,
                                                      state=_copies(prepared.state))
        result.phase = "run"
        inputs = _copies(prepared.inputs)
        actual = (compiled(*inputs), inputs)
        result.phase = "compare"
        compare(actual, prepared.expected, result.case)
        result.phase = ""
    except Exception as e:  # noqa: BLE001
        result.error = first_line(e)
        crash = endpoint.crashed() if "UNAVAILABLE" in result.error else ""
        if crash or generation != endpoint.current()[0]:
            result.retry = True
            if crash:
                result.error = f"{crash} while this case was in flight"
            endpoint.recover(generation)
    result.seconds += time.perf_counter() - t0
    return result


class Endpoint:
    """A kilnd someone else runs, at ``address``: never restarted."""

    def __init__(self, address: str, timeout: float = 300.0):
        self.address = address
        self.timeout = timeout
        self.generation = 0
        self.client = kiln.Client(address, timeout=timeout)
        self.lock = threading.Lock()

    def current(self) -> tuple[int, kiln.Client]:
        """(generation, client), after any restart in progress has finished."""
        with self.lock:
            return self.generation, self.client

    def crashed(self) -> str:
        """Why the daemon is gone ("" while it runs, or when it is not ours)."""
        return ""

    def recover(self, generation: int) -> None:
        """Restarts the daemon once per crash (no-op when it is not ours)."""

    def close(self) -> None:
        self.client.close()


class OwnedKilnd(Endpoint):
    """A kilnd this run starts (tests/e2e/support.py's Kilnd), restarted on the
    same port and cache dir if it dies."""

    def __init__(self, workdir: pathlib.Path, extra_args: Sequence[str] = (),
                 targets: Sequence[str] = ("cpu",), timeout: float = 300.0):
        sys.path.insert(0, str(REPO / "tests" / "e2e"))
        from support import Kilnd  # the e2e tests' daemon helper
        self._kilnd_cls = Kilnd
        self.workdir = workdir
        self.targets = tuple(targets)
        self.extra_args = tuple(extra_args) + local_agent_args(self.targets, extra_args)
        self.crashes: list[str] = []
        self.daemon = self._start("127.0.0.1:0")
        super().__init__(self.daemon.address, timeout)

    def _start(self, listen: str):
        daemon = self._kilnd_cls(self.workdir, self.workdir / "cache", name="kilnd-registry",
                                 extra_args=self.extra_args, listen=listen).start()
        # start() waits for the cpu device; other targets' agents may come later.
        deadline = time.monotonic() + DEVICE_WAIT_S
        with kiln.Client(daemon.address, timeout=5) as client:
            while True:
                kinds = {d.kind for d in client.devices()}
                missing = [t for t in self.targets if t not in kinds]
                if not missing:
                    return daemon
                if time.monotonic() > deadline:
                    daemon.stop()
                    raise RuntimeError(f"kilnd has no device of kind {missing} after "
                                       f"{DEVICE_WAIT_S:.0f}s (kilnd args {self.extra_args}); "
                                       f"log: {daemon.log_path}")
                time.sleep(0.1)

    @property
    def log_path(self) -> pathlib.Path:
        return self.daemon.log_path

    def crashed(self) -> str:
        proc = self.daemon.proc
        if proc is None:
            return ""
        try:  # the socket closes a moment before the process is gone
            code = proc.wait(timeout=CRASH_WAIT_S)
        except subprocess.TimeoutExpired:
            return ""
        if code < 0:
            try:
                why = signal.Signals(-code).name
            except ValueError:
                why = f"signal {-code}"
            return f"kilnd crashed ({why})"
        return f"kilnd exited with code {code}"

    def recover(self, generation: int) -> None:
        with self.lock:
            if generation != self.generation or not self.crashed():
                return
            self.crashes.append(self.crashed())
            old = self.daemon
            try:  # its agents are in its process group and outlive it
                os.killpg(old.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            old._log.close()
            self.client.close()
            self.daemon = self._start(self.address)
            self.client = kiln.Client(self.address, timeout=self.timeout)
            self.generation += 1

    def close(self) -> None:
        super().close()
        self.daemon.stop()


# --- the run ---------------------------------------------------------------------

def select(cases: Iterable[Case], patterns: Sequence[str],
           families: Sequence[str] = ()) -> list[Case]:
    """Cases of ``families`` (all when empty) matching any of ``patterns``: a
    glob (``*?[``) matches the whole name, any other pattern is a substring."""
    cases = [c for c in cases if not families or c.family in families]
    if not patterns:
        return cases

    def matches(name: str, p: str) -> bool:
        return fnmatch.fnmatchcase(name, p) if any(ch in p for ch in "*?[") else p in name
    return [c for c in cases if any(matches(c.name, p) for p in patterns)]


def run_registry(target: str, endpoint: Endpoint, patterns: Sequence[str] = (),
                 jobs: int = 2, progress: Callable[[Result], None] | None = None,
                 families: Sequence[str] = (), suite: Suite = REGISTRY) -> Summary:
    """Runs the selected cases of ``suite`` against ``endpoint``'s kilnd for
    ``target``."""
    return run_targets([target], endpoint, patterns, jobs, progress, families, suite)[target]


def run_targets(targets: Sequence[str], endpoint: Endpoint, patterns: Sequence[str] = (),
                jobs: int = 2, progress: Callable[[Result], None] | None = None,
                families: Sequence[str] = (), suite: Suite = REGISTRY
                ) -> dict[str, Summary]:
    """Runs the selected cases of ``suite`` against ``endpoint``'s kilnd for
    each of ``targets``: a summary per target. Each case is built, run eagerly
    and exported once (the main thread's work, most of a run's time), then
    compiled and run for every target."""
    t0 = time.perf_counter()
    cases = select(suite.cases(), patterns, families)
    # Prepared cases waiting for the pool are bounded: each holds its graph,
    # inputs and eager outputs (the OpInfo family has thousands).
    backlog = threading.BoundedSemaphore(max(1, jobs) * 8)

    def run_one(prepared: Prepared) -> list[Result]:
        try:
            results = [execute(prepared, endpoint, t) for t in targets]
        finally:
            backlog.release()
        if not any(r.retry for r in results):  # only a retry needs the graph again
            prepared.drop()
        return results

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = []
        for case in cases:
            prepared = prepare(case)
            backlog.acquire()
            futures.append((prepared, pool.submit(run_one, prepared)))
        ran = [(prepared, fut.result()) for prepared, fut in futures]
    # Cases in flight when kilnd died run again, one at a time; a case that
    # kills it alone keeps the crash as its error.
    for prepared, results in ran:
        for target, result in zip(targets, results):
            if result.retry:
                execute(prepared, endpoint, target, result)
                result.retry = False
        prepared.drop()
    seconds = time.perf_counter() - t0
    known = suite.known()
    summaries = {}
    for i, target in enumerate(targets):
        xfails = read_xfails(target, suite)
        stale = [] if patterns or families else sorted(n for n in xfails if n not in known)
        results = [per_target[i] for _, per_target in ran]
        for result in results:
            expected_fail = result.case.name in xfails
            if result.ok:
                result.status = XPASS if expected_fail else PASSED
            else:
                result.status = XFAIL if expected_fail else FAILED
            if progress:
                progress(result)
        summaries[target] = Summary(target, results, stale, seconds, suite,
                                    dict(suite.skipped()))
    return summaries


def update_xfails(summary: Summary, partial: bool) -> dict[str, str]:
    """The xfail table after this run: failing cases with their first error line;
    after a ``partial`` run (-k, --family, the OpInfo sample), entries of cases
    not run are kept (unless they name no case)."""
    suite = summary.suite
    table = read_xfails(summary.target, suite) if partial or not suite.whole else {}
    for r in summary.results:
        table.pop(r.case.name, None)
        if not r.ok:
            table[r.case.name] = f"[{r.phase}] {r.error}"
    known = suite.known()
    return {n: why for n, why in table.items() if n in known}


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.registry.run", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--target", default="cpu",
                    help="compile target, or several separated by commas: each case is "
                         "exported once and run on each (default: cpu)")
    where = ap.add_mutually_exclusive_group()
    where.add_argument("--address", help="HOST:PORT of a running kilnd")
    where.add_argument("--start-kilnd", action="store_true",
                       help="start a kilnd from $KILN_BUILD_DIR/bin on a free loopback port "
                            "(the default when --address is not given)")
    ap.add_argument("--kilnd-arg", action="append", default=[],
                    help="extra kilnd argument with --start-kilnd (repeatable); the "
                         "target's local agents are started unless one is "
                         "--local-agents=...")
    ap.add_argument("-k", action="append", default=[], dest="patterns",
                    help="run cases whose name contains PATTERN, or matches it whole when it "
                         "is a glob (*?[); repeatable")
    ap.add_argument("--family", action="append", default=[], dest="families",
                    help="run the cases of one cases_<FAMILY>.py file (repeatable)")
    ap.add_argument("--opinfo", choices=OPINFO_CHOICES, default="none",
                    help="run the OpInfo family (tests/registry/opinfo.py) instead of the "
                         "hand-written cases: its fixed, seeded CI 'sample' or the 'full' "
                         "set, against xfail/opinfo-<target>.txt (default: none)")
    ap.add_argument("--jobs", type=int, default=2, help="compiles/executions in flight")
    ap.add_argument("--update-xfail", action="store_true",
                    help="rewrite xfail/<target>.txt from this run and exit 0")
    ap.add_argument("--strict-export", action="store_true",
                    help="export with torch.export's strict mode (TorchDynamo)")
    ap.add_argument("--list", action="store_true", help="list the selected cases and exit")
    ap.add_argument("-v", "--verbose", action="store_true",
                    help="print every case as it finishes and all names per reason")
    args = ap.parse_args(argv)
    global STRICT_EXPORT
    STRICT_EXPORT = STRICT_EXPORT or args.strict_export
    # torch logs the view failure the client's export retry recovers from.
    logging.getLogger("torch._subclasses.fake_tensor").setLevel(logging.CRITICAL)

    suite = opinfo_suite(args.opinfo)
    targets = [t for t in args.target.split(",") if t]
    if args.list:
        cases = select(suite.cases(), args.patterns, args.families)
        for c in cases:
            print(f"{c.family:10s} {c.describe()}")
        print(f"{len(cases)} {suite.noun}")
        return 0

    def progress(r: Result) -> None:
        if args.verbose or r.status in (FAILED, XPASS):
            tail = f" [{r.phase}] {r.error}" if r.error else ""
            print(f"{r.status.upper():7s} {r.case.name} ({r.seconds:.2f}s){tail}", flush=True)

    endpoint: Endpoint | None = None
    tmp = None
    try:
        if args.address:
            endpoint = Endpoint(args.address)
        else:
            tmp = tempfile.TemporaryDirectory(prefix="kiln-registry-")
            try:
                endpoint = OwnedKilnd(pathlib.Path(tmp.name), args.kilnd_arg,
                                      targets=targets)
            except BaseException as e:  # pytest.fail outside pytest raises Failed
                print(f"could not start kilnd: {e}", file=sys.stderr)
                return 2
        summaries = run_targets(targets, endpoint, args.patterns, args.jobs, progress,
                                args.families, suite)
    finally:
        if endpoint is not None:
            try:
                endpoint.close()
            except BaseException as e:  # noqa: BLE001
                print(f"kilnd did not stop cleanly: {e}", file=sys.stderr)
        if tmp is not None:
            tmp.cleanup()
    for summary in summaries.values():
        print(summary.report(verbose=args.verbose))
    if isinstance(endpoint, OwnedKilnd) and endpoint.crashes:
        print(f"kilnd died {len(endpoint.crashes)} time(s) during the run and was "
              f"restarted: {', '.join(endpoint.crashes)}")
    if args.update_xfail:
        for target, summary in summaries.items():
            table = update_xfails(summary, bool(args.patterns or args.families))
            write_xfails(target, table, suite)
            print(f"wrote {xfail_path(target, suite).relative_to(REPO)} "
                  f"({len(table)} entries)")
        return 0
    return 0 if all(s.ok for s in summaries.values()) else 1


if __name__ == "__main__":
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    sys.exit(main())
