"""Speed benchmark (issue 12): Kiln against eager PyTorch, torch.compile
(Inductor, freezing) and ONNX Runtime, every baseline measured in the same run.

One report from one run (progress goes to stderr, the report to stdout):

  * models (eval mode; the same module, so the same weights, and the same
    inputs for every system) at each --threads count: the median over
    interleaved rounds (the systems take turns each round, in a rotating
    order) of the time per call of
      - Kiln end to end: ``compiled(*inputs)`` through kilnd and its cpu agent,
      - Kiln's device run alone: the agent's ``last_timings["run"]`` of those
        same calls,
      - eager PyTorch, Inductor (``torch._inductor.config.freezing = True``,
        under ``torch.no_grad()``) and ONNX Runtime (``torch.onnx.export``);
    then Kiln/best baseline, its geomean over the model rows, and each
    system's relative L2 error against eager (flagged past 1e-4);
  * matmul 1024^3 f32: GFLOP/s of Kiln (end to end, device run alone) and eager,
    as % of a one-core FMA peak measured in the same run (bench/fma_peak.c,
    built here with ``cc -O3 -march=native``);
  * per-call overhead: ``x + 1`` on 4 floats through Kiln against a null unary
    call, grpc.health.v1 Check on the same channel: p50, p99 and the ratio;
  * mid-size tensors: ``x * 2 + 1`` with 1 to 7 MiB in and out on a direct
    channel, through its exchange buffer against a client without one (each
    tensor in a sealed memfd), alternating: median ms per call;
  * big tensors: a 256 MiB f32 ``x + 1`` round trip through Kiln, MB/s;
  * dense linear algebra (bench_linalg.py): solve, inv, cholesky, qr,
    eigvalsh, eigh, svd and matrix_exp through Kiln against eager (LAPACK),
    end to end and run alone, at each --threads count;
  * kernels (bench_kernels.py): reductions, norms, softmaxes, a scan and
    elementwise chains through Kiln's generated code against eager, the
    same way.

Each thread count gets its own kilnd, whose local cpu agent runs parallel
loops on that many compute threads (KILN_AGENT_COMPUTE_THREADS); with
--address, the given daemon's agents serve every count as they are
configured. A benchmark, never a test: no number fails it. Inputs over
Kiln's inline limit (1 MiB) get a new value in one element before each Kiln
call, so the content-addressed blob store never skips their upload.

Usage: bench/run.sh [--quick] [--models mlp,resnet18_b1,...] [--threads 1,2]
                    [--sections models,matmul,overhead,mid,big,linalg,kernels]
                    [--rounds N]
                    [--address HOST:PORT] [--build-dir build]
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import math
import os
import pathlib
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from typing import Any, Callable, Iterator, Sequence

import numpy as np
import torch
import torch.nn as nn
from torch.utils import _pytree as pytree

import kiln
from kiln.execution import INLINE_INPUT_LIMIT
from kiln.testing import MLP

REPO = pathlib.Path(__file__).resolve().parents[1]
ERROR_FLAG = 1e-4          # relative L2 error against eager past this is flagged "!"
BASELINES = ("eager", "inductor", "ort")
SECTIONS = ("models", "matmul", "overhead", "mid", "big", "linalg", "kernels")
START_TIMEOUT_S = 90.0
STOP_TIMEOUT_S = 30.0


def log(msg: str) -> None:
    print(f"[bench] {msg}", file=sys.stderr, flush=True)


def first_line(e: BaseException, limit: int = 160) -> str:
    text = (str(e).strip().splitlines() or [""])[0]
    text = f"{type(e).__name__}: {text}" if text else type(e).__name__
    return text if len(text) <= limit else text[:limit - 3] + "..."


# --- host ---------------------------------------------------------------------

def host_cpu() -> tuple[str, set[str]]:
    """The first processor's model name with its family and model numbers
    (a VM's name can be as bare as "AMD EPYC"), and its flags, from
    /proc/cpuinfo."""
    name, flags, numbers = "unknown", set(), {}
    with contextlib.suppress(OSError):
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            key = key.strip()
            if key == "model name" and name == "unknown":
                name = value.strip()
            elif key in ("cpu family", "model") and key not in numbers:
                numbers[key] = value.strip()
            elif key == "flags" and not flags:
                flags = set(value.split())
    if numbers:
        name += f" (family {numbers.get('cpu family', '?')}, model {numbers.get('model', '?')})"
    return name, flags


def host_lines() -> list[str]:
    name, flags = host_cpu()
    try:
        import onnxruntime
        ort_version = onnxruntime.__version__
    except ImportError:
        ort_version = "not installed"
    simd = ", ".join(f"{f} {'yes' if f in flags else 'no'}" for f in ("avx512f", "avx2", "fma"))
    return [f"host: {name}; {simd}; {os.cpu_count()} logical cpus",
            f"torch {torch.__version__}, onnxruntime {ort_version}, python "
            f"{sys.version.split()[0]}"]


# --- the daemon ---------------------------------------------------------------

class Daemon:
    """kilnd on a kernel-chosen loopback port with its own local cpu agent
    (started as tests/e2e/support.py does); SIGTERM on stop()."""

    def __init__(self, bin_dir: pathlib.Path, workdir: pathlib.Path, compute_threads: int):
        self.kilnd = bin_dir / "kilnd"
        self.compute_threads = compute_threads
        workdir.mkdir(parents=True, exist_ok=True)
        if not os.access(self.kilnd, os.X_OK):
            sys.exit(f"bench: no {self.kilnd}; build with scripts/build.sh, or pass --address")
        self.workdir = workdir
        self.port_file = workdir / "kilnd.port"
        self.log_path = workdir / "kilnd.log"
        self.proc: subprocess.Popen | None = None
        self.address = ""

    def start(self) -> "Daemon":
        # A port file left by an earlier run in the same folder would name
        # that kilnd's port.
        self.port_file.unlink(missing_ok=True)
        cmd = [str(self.kilnd), "--listen", "127.0.0.1:0", "--port-file", str(self.port_file),
               "--cache-dir", str(self.workdir / "cache"), "--metrics-listen", "127.0.0.1:0",
               "--metrics-port-file", str(self.workdir / "kilnd.metrics-port")]
        self._log = open(self.log_path, "ab")
        # Local agents inherit kilnd's environment.
        env = dict(os.environ, KILN_AGENT_COMPUTE_THREADS=str(self.compute_threads))
        self.proc = subprocess.Popen(cmd, stdout=self._log, stderr=subprocess.STDOUT,
                                     start_new_session=True, env=env)
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def _fail(self, why: str) -> None:
        tail = "\n".join(self.log_path.read_text(errors="replace").splitlines()[-30:])
        raise RuntimeError(f"kilnd {why}\n--- {self.log_path} (last lines) ---\n{tail}")

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        last = "no port file yet"
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self._fail(f"exited with code {self.proc.returncode} during startup")
            if not self.address:
                with contextlib.suppress(OSError, ValueError):
                    text = self.port_file.read_text().strip()
                    if text:
                        self.address = f"127.0.0.1:{int(text.rsplit(':', 1)[-1])}"
            if self.address:
                try:
                    with kiln.Client(self.address, timeout=2) as client:
                        devices = client.devices()
                    if any(d.kind == "cpu" for d in devices):
                        return
                    last = f"no cpu device yet: {devices}"
                except kiln.KilnError as e:
                    last = first_line(e)
            time.sleep(0.05)
        self._fail(f"not ready after {START_TIMEOUT_S:.0f}s (last: {last})")

    def stop(self) -> None:
        """SIGTERM; SIGKILL to its process group (its agents) if it lingers."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                log(f"kilnd did not exit {STOP_TIMEOUT_S:.0f}s after SIGTERM; killing it")
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)  # only if anything of it is left
        self.proc.wait()
        self._log.close()
        self.proc = None


@contextlib.contextmanager
def daemon_addresses(args: argparse.Namespace,
                     workdir: pathlib.Path) -> Iterator[dict[int, str]]:
    """Thread count -> kilnd address: --address for every count as given,
    else a fresh kilnd per count whose agent runs that many compute threads."""
    if args.address:
        yield {t: args.address for t in args.threads}
        return
    with contextlib.ExitStack() as stack:
        addresses = {}
        for t in args.threads:
            daemon = Daemon(args.build_dir / "bin", workdir / f"kilnd-{t}thr", t).start()
            stack.callback(daemon.stop)
            log(f"kilnd for {t} compute thread(s) up at {daemon.address} "
                f"(log {daemon.log_path})")
            addresses[t] = daemon.address
        yield addresses


# --- measuring ----------------------------------------------------------------

@dataclasses.dataclass
class Contender:
    """One system on one workload: ``fn()`` runs one call. ``check()`` runs
    the canonical inputs (for the error against eager); ``cell`` stands in
    for the time when the system could not be set up (``why`` says why);
    ``device_runs`` collects the agent's run seconds of Kiln calls."""

    name: str
    fn: Callable[[], Any] | None = None
    check: Callable[[], Any] | None = None
    cell: str = ""
    why: str = ""
    device_runs: list[float] | None = None

    @property
    def ok(self) -> bool:
        return self.fn is not None


def failed(name: str, cell: str, e: BaseException) -> Contender:
    return Contender(name, cell=cell, why=first_line(e))


def per_call(fn: Callable[[], Any], calls: int) -> float:
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t0) / calls


def calls_per_round(fn: Callable[[], Any], target_s: float) -> int:
    """Warms up, then how many calls fill about ``target_s``."""
    fn()
    fn()
    one = per_call(fn, 1)
    return max(1, min(1000, int(target_s / max(one, 1e-7))))


@dataclasses.dataclass
class Medians:
    seconds: dict[str, float]       # per call, by contender name
    device_run: dict[str, float]    # Kiln's agent run seconds per call


# Pause between two systems' turns: thread pools that spin-wait after their
# work (libgomp under eager and Inductor, ONNX Runtime, Kiln's agent) settle
# before the next system is timed, instead of taking a core from it.
SETTLE_S = 0.05


def interleaved(contenders: Sequence[Contender], rounds: int, target_s: float) -> Medians:
    """Median per-call time of each working contender over ``rounds`` rounds;
    each round every contender runs its calls once, the order rotating, with
    SETTLE_S of quiet before each turn."""
    live = [c for c in contenders if c.ok]
    calls = {c.name: calls_per_round(c.fn, target_s) for c in live}
    times: dict[str, list[float]] = {c.name: [] for c in live}
    runs: dict[str, list[float]] = {c.name: [] for c in live if c.device_runs is not None}
    for r in range(rounds):
        shift = r % max(1, len(live))
        for c in live[shift:] + live[:shift]:
            time.sleep(SETTLE_S)
            mark = len(c.device_runs) if c.device_runs is not None else 0
            times[c.name].append(per_call(c.fn, calls[c.name]))
            if c.device_runs is not None:
                runs[c.name].append(statistics.fmean(c.device_runs[mark:]))
    return Medians({k: statistics.median(v) for k, v in times.items()},
                   {k: statistics.median(v) for k, v in runs.items()})


def flat_outputs(out: Any) -> list[torch.Tensor]:
    leaves = pytree.tree_leaves(out)
    return [torch.as_tensor(x) for x in leaves]


def rel_l2(got: Any, ref: Sequence[torch.Tensor]) -> float:
    """||got - ref|| / ||ref|| over all outputs, in float64."""
    got = flat_outputs(got)
    if len(got) != len(ref):
        return math.inf
    num = den = 0.0
    for g, r in zip(got, ref):
        if tuple(g.shape) != tuple(r.shape):
            return math.inf
        g, r = g.detach().double(), r.detach().double()
        num += float(torch.sum((g - r) ** 2))
        den += float(torch.sum(r ** 2))
    return math.sqrt(num / den) if den else math.sqrt(num)


def errors_vs_eager(contenders: Sequence[Contender], ref: Sequence[torch.Tensor]
                    ) -> dict[str, float]:
    errs = {}
    for c in contenders:
        if c.ok and c.name != "eager":
            try:
                errs[c.name] = rel_l2(c.check(), ref)
            except Exception as e:  # a wrong shape or a failing call: say so, go on
                log(f"{c.name}: checking the outputs failed: {first_line(e)}")
                errs[c.name] = math.inf
    return errs


# --- the systems --------------------------------------------------------------

class FreshInputs:
    """Copies of the inputs for Kiln calls; before each call, every one over the
    inline limit gets a new value in its first element, so each call uploads
    it (the blob store is content-addressed: an unchanged input is never sent
    twice)."""

    def __init__(self, inputs: Sequence[torch.Tensor]):
        self.tensors = [x.clone() for x in inputs]
        self._big = [(t.view(-1), float(t.view(-1)[0]))
                     for t in self.tensors if t.numel() * t.element_size() > INLINE_INPUT_LIMIT]
        self._count = 0

    def bump(self) -> None:
        self._count += 1
        for flat, base in self._big:
            flat[0] = base + 1e-5 * self._count


@dataclasses.dataclass
class KilnBuild:
    """A CompiledModel (None when export or compile failed, ``why`` says why)
    and the seconds torch.export + Client.compile took."""

    compiled: Any
    seconds: float = 0.0
    why: str = ""


# CompileOptions for every Kiln compile (--kernel-library).
KILN_OPTIONS: dict[str, Any] = {}


def kiln_compile(client: kiln.Client, module: nn.Module, inputs: Sequence[torch.Tensor],
                 name: str) -> KilnBuild:
    t0 = time.perf_counter()
    try:
        compiled = client.compile(torch.export.export(module, tuple(inputs)), name=name,
                                  options=dict(KILN_OPTIONS) or None)
    except Exception as e:  # an op Kiln lacks, an export failure: a cell, not a crash
        log(f"kiln: {name} does not compile: {first_line(e)}")
        return KilnBuild(None, why=first_line(e))
    build = KilnBuild(compiled, time.perf_counter() - t0)
    log(f"kiln: exported and compiled {name} in {build.seconds:.1f}s "
        f"(cache hit: {compiled.cache_hit})")
    return build


def kiln_contender(build: KilnBuild, inputs: Sequence[torch.Tensor]) -> Contender:
    compiled = build.compiled
    if compiled is None:
        return Contender("kiln", cell="(compile fails)", why=build.why)
    try:
        compiled(*inputs)
    except Exception as e:
        return failed("kiln", "(run fails)", e)
    feed = FreshInputs(inputs)
    runs: list[float] = []

    def call() -> Any:
        feed.bump()
        out = compiled(*feed.tensors)
        runs.append(compiled.last_timings["run"])
        return out

    return Contender("kiln", fn=call, check=lambda: compiled(*inputs), device_runs=runs)


def eager_contender(module: nn.Module, inputs: Sequence[torch.Tensor]) -> Contender:
    fn = lambda: module(*inputs)  # noqa: E731
    return Contender("eager", fn=fn, check=fn)


def inductor_contender(module: nn.Module, inputs: Sequence[torch.Tensor],
                       threads: int) -> Contender:
    """torch.compile with freezing, compiled afresh for this thread count
    (Inductor bakes the count into its C++ kernels; cpp.threads keeps code
    cached for another count from being reused)."""
    import torch._dynamo
    import torch._inductor.config as inductor_config
    torch._dynamo.reset()
    inductor_config.freezing = True
    inductor_config.cpp.threads = threads
    try:
        compiled = torch.compile(module)
        t0 = time.perf_counter()
        compiled(*inputs)
        log(f"inductor: compiled in {time.perf_counter() - t0:.1f}s")
    except Exception as e:
        return failed("inductor", "(compile fails)", e)
    fn = lambda: compiled(*inputs)  # noqa: E731
    return Contender("inductor", fn=fn, check=fn)


def onnx_export(module: nn.Module, inputs: Sequence[torch.Tensor], path: pathlib.Path) -> str:
    """Exports to ``path``; returns "" or why it failed."""
    try:
        import onnx
        # The exporter prints its progress on stdout, inside the table.
        with warnings.catch_warnings(), contextlib.redirect_stdout(sys.stderr):
            warnings.simplefilter("ignore")
            # torch's exporter (torch.export + onnxscript) at its own
            # default opset: opset 17 made its version converter fail on
            # the encoder's reductions.
            torch.onnx.export(module, tuple(inputs), str(path), dynamo=True)
        onnx.checker.check_model(str(path))
        return ""
    except Exception as e:
        return first_line(e)


def ort_contender(path: pathlib.Path, export_error: str, inputs: Sequence[torch.Tensor],
                  threads: int) -> Contender:
    if export_error:
        return Contender("ort", cell="(export fails)", why=export_error)
    try:
        import onnxruntime as ort
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        feeds = {arg.name: x.numpy() for arg, x in zip(session.get_inputs(), inputs)}
    except Exception as e:
        return failed("ort", "(session fails)", e)
    fn = lambda: session.run(None, feeds)  # noqa: E731
    try:
        fn()
    except Exception as e:
        return failed("ort", "(run fails)", e)
    return Contender("ort", fn=fn, check=fn)


# --- models -------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class ModelSpec:
    label: str
    build: Callable[[], tuple[nn.Module, tuple[torch.Tensor, ...]]]


def _inputs(*shape: int) -> tuple[torch.Tensor, ...]:
    return (torch.randn(*shape, generator=torch.Generator().manual_seed(0)),)


def _mlp():
    return MLP(256, 512, 256), _inputs(64, 256)


def _resnet18(batch: int):
    import torchvision
    return torchvision.models.resnet18(weights=None), _inputs(batch, 3, 224, 224)


def _mobilenet():
    import torchvision
    return torchvision.models.mobilenet_v3_small(weights=None), _inputs(1, 3, 224, 224)


def _encoder():
    layer = nn.TransformerEncoderLayer(d_model=256, nhead=8, batch_first=True)
    return layer, _inputs(8, 128, 256)


MODELS: dict[str, ModelSpec] = {
    "mlp": ModelSpec("MLP 256-512-256 b64", _mlp),
    "resnet18_b1": ModelSpec("resnet18 224² b1", lambda: _resnet18(1)),
    "resnet18_b8": ModelSpec("resnet18 224² b8", lambda: _resnet18(8)),
    "mobilenet_v3_small": ModelSpec("mobilenet_v3_small b1", _mobilenet),
    "encoder": ModelSpec("TransformerEncoderLayer 256/8 s128 b8", _encoder),
}


@dataclasses.dataclass
class ModelRow:
    label: str
    threads: int
    cells: dict[str, str]           # contender name -> failure cell
    seconds: dict[str, float]
    device_run: float | None
    errors: dict[str, float]

    def best(self) -> tuple[str, float] | None:
        have = [(self.seconds[b], b) for b in BASELINES if b in self.seconds]
        return (min(have)[1], min(have)[0]) if have else None

    def kiln_ratio(self) -> float | None:
        best = self.best()
        return self.seconds["kiln"] / best[1] if best and "kiln" in self.seconds else None

    def run_ratio(self) -> float | None:
        best = self.best()
        return self.device_run / best[1] if best and self.device_run is not None else None


def build_model(spec: ModelSpec) -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    torch.manual_seed(0)  # the same weights every run
    module, inputs = spec.build()
    return module.eval(), inputs


def kiln_builds(clients: dict[int, kiln.Client], module: nn.Module,
                inputs: Sequence[torch.Tensor], name: str) -> dict[int, KilnBuild]:
    """The compile of `module` on each thread count's daemon (one compile
    per distinct daemon)."""
    by_client: dict[int, KilnBuild] = {}
    builds = {}
    for t, client in clients.items():
        if id(client) not in by_client:
            by_client[id(client)] = kiln_compile(client, module, inputs, name)
        builds[t] = by_client[id(client)]
    return builds


def measure_model(clients: dict[int, kiln.Client], key: str, spec: ModelSpec,
                  threads: Sequence[int], args: argparse.Namespace, workdir: pathlib.Path,
                  notes: list[str]) -> list[ModelRow]:
    """Rows of one model, one per thread count."""
    log(f"model {spec.label}")
    module, inputs = build_model(spec)
    # Both exports trace with grad enabled, as a user's would: under no_grad
    # some modules (nn.TransformerEncoderLayer) take a fused fast path instead.
    builds = kiln_builds(clients, module, inputs, key)
    build = builds[threads[0]]
    if build.compiled is not None:
        notes.append(f"kiln {spec.label}: export + compile {build.seconds:.1f} s "
                     f"(Compile RPC {build.compiled.timings['compile']:.1f} s)")
    onnx_path = workdir / f"{key}.onnx"
    export_error = onnx_export(module, inputs, onnx_path)
    with torch.no_grad():
        ref = flat_outputs(module(*inputs))
        rows = []
        for t in threads:
            torch.set_num_threads(t)
            log(f"  {t} thread(s)")
            contenders = [kiln_contender(builds[t], inputs),
                          eager_contender(module, inputs),
                          inductor_contender(module, inputs, t),
                          ort_contender(onnx_path, export_error, inputs, t)]
            errors = errors_vs_eager(contenders, ref)
            medians = interleaved(contenders, args.rounds, args.round_s)
            rows.append(ModelRow(spec.label, t, {c.name: c.cell for c in contenders if not c.ok},
                                 medians.seconds, medians.device_run.get("kiln"), errors))
            for c in contenders:
                if not c.ok:
                    notes.append(f"{c.name} {c.cell} on {spec.label}, {t} thr: {c.why}")
    return rows


# --- matmul and the FMA peak --------------------------------------------------

def fma_peak(workdir: pathlib.Path, seconds: float) -> tuple[dict[str, float], str]:
    """One-core GFLOP/s per vector width from bench/fma_peak.c, or ({}, why)."""
    exe = workdir / "fma_peak"
    cmd = ["cc", "-O3", "-march=native", "-o", str(exe), str(REPO / "bench" / "fma_peak.c"), "-lm"]
    try:
        subprocess.run(cmd, check=True, capture_output=True, text=True)
        out = subprocess.run([str(exe), str(seconds)], check=True, capture_output=True,
                             text=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        detail = getattr(e, "stderr", "") or str(e)
        return {}, f"FMA peak not measured: {' '.join(cmd[:3])} failed: {detail.strip()[:200]}"
    peaks = {}
    for line in out.splitlines():
        name, _, value = line.partition(" ")
        peaks[name] = float(value)
    return peaks, ""


class MatMul(nn.Module):
    """x @ w: the weight is resident on the device, x travels every call."""

    def __init__(self, n: int):
        super().__init__()
        self.w = nn.Parameter(torch.randn(n, n) / math.sqrt(n))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x @ self.w


def percent(gflops: float, peak: float | None) -> str:
    return f"{100 * gflops / peak:.0f}%" if peak else "-"


def measure_matmul(clients: dict[int, kiln.Client], threads: Sequence[int],
                   peak_core: float | None,
                   args: argparse.Namespace) -> list[list[str]]:
    """Rows: threads, then GFLOP/s and % of peak for Kiln e2e, Kiln run, eager."""
    n = 1024
    log(f"matmul {n}^3")
    torch.manual_seed(0)
    module = MatMul(n).eval()
    inputs = _inputs(n, n)
    flops = 2.0 * n ** 3
    rows = []
    builds = kiln_builds(clients, module, inputs, "matmul1024")
    with torch.no_grad():
        ref = flat_outputs(module(*inputs))
        for t in threads:
            torch.set_num_threads(t)
            contenders = [kiln_contender(builds[t], inputs), eager_contender(module, inputs)]
            errors = errors_vs_eager(contenders, ref)
            m = interleaved(contenders, args.rounds, args.round_s)
            row = [str(t)]
            if "kiln" in m.seconds:
                e2e, run = flops / m.seconds["kiln"] / 1e9, flops / m.device_run["kiln"] / 1e9
                peak = peak_core * t if peak_core else None
                row += [f"{e2e:.1f}", percent(e2e, peak), f"{run:.1f}",
                        percent(run, peak), format_error(errors.get("kiln"))]
            else:
                row += [contenders[0].cell, "", "", "", ""]  # (compile fails), (run fails)
            eager = flops / m.seconds["eager"] / 1e9
            row += [f"{eager:.1f}", percent(eager, peak_core * t if peak_core else None)]
            rows.append(row)
    return rows


# --- per-call overhead and big tensors ----------------------------------------

class AddOne(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + 1


def percentile_us(samples: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(samples), q)) * 1e6


def measure_overhead(clients: dict[str, kiln.Client], calls: int) -> list[str]:
    """x+1 on 4 floats through Kiln vs grpc.health.v1 Check on the same
    daemon, alternating call by call, for each transport in ``clients``."""
    from grpc_health.v1 import health_pb2, health_pb2_grpc
    log(f"per-call overhead, {calls} calls each")
    x = torch.randn(4)
    lines = []
    for transport, client in clients.items():
        build = kiln_compile(client, AddOne(), (x,), "add_one_4")
        if build.compiled is None:
            return [f"x+1 on 4 floats: (compile fails) {build.why}"]
        compiled = build.compiled
        # The client's own channel: the same daemon and connection.
        health = health_pb2_grpc.HealthStub(client._rpc.channel)
        request = health_pb2.HealthCheckRequest()
        kiln_s, check_s, server_s = [], [], []
        for i in range(calls + 20):  # 20 warm-up calls of each
            t0 = time.perf_counter()
            compiled(x)
            t1 = time.perf_counter()
            health.Check(request, timeout=10)
            t2 = time.perf_counter()
            if i >= 20:
                kiln_s.append(t1 - t0)
                check_s.append(t2 - t1)
                server_s.append(compiled.last_timings["total"])
        assert compiled.last_transport == transport, compiled.last_transport
        k50, k99 = percentile_us(kiln_s, 50), percentile_us(kiln_s, 99)
        h50, h99 = percentile_us(check_s, 50), percentile_us(check_s, 99)
        lines += [
            f"Kiln x+1 (4 f32), {transport:6}  p50 {k50:8.1f} us   p99 {k99:8.1f} us   "
            f"(daemon+agent total p50 {percentile_us(server_s, 50):.1f} us)",
            f"grpc.health.v1 Check    p50 {h50:8.1f} us   p99 {h99:8.1f} us   (alternating)",
            f"Kiln {transport:6} / Check     p50 {k50 / h50:8.2f} x    p99 {k99 / h99:8.2f} x",
        ]
    return lines


class TwiceAndOne(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2 + 1


# Sizes of the mid-size section (MiB in, the same out): each under the
# exchange buffer's tensor limit (kiln.exchange.MAX_TENSOR_BYTES).
MID_MIB = (1, 2, 4, 7)


def measure_mid(buffered: kiln.Client, unbuffered: kiln.Client, calls: int) -> list[str]:
    """x * 2 + 1 on a direct channel with and without an exchange buffer,
    alternating rounds of 10 calls: median ms per call end to end."""
    log(f"mid-size tensors: {', '.join(map(str, MID_MIB))} MiB, {calls} calls each way")
    rows = []
    for mib in MID_MIB:
        x = torch.randn(mib << 18, generator=torch.Generator().manual_seed(0))
        contenders = {}
        for name, client in (("buffer", buffered), ("memfds", unbuffered)):
            build = kiln_compile(client, TwiceAndOne(), (x,), f"twice_and_one_{mib}MiB")
            if build.compiled is None:
                return [f"mid-size x * 2 + 1: (compile fails) {build.why}"]
            feed = FreshInputs([x])
            for _ in range(3):  # the channel, then its buffer
                feed.bump()
                build.compiled(*feed.tensors)
            contenders[name] = (build.compiled, feed, [])
        for _ in range(max(1, calls // 10)):
            for compiled, feed, walls in contenders.values():
                for _ in range(10):
                    feed.bump()
                    t0 = time.perf_counter()
                    compiled(*feed.tensors)
                    walls.append(time.perf_counter() - t0)
        got = {name: statistics.median(walls) for name, (_, _, walls) in contenders.items()}
        transports = {name: c.last_transport for name, (c, _, _) in contenders.items()}
        rows.append([f"{mib}", format_ms(got["buffer"]), format_ms(got["memfds"]),
                     f"{got['memfds'] / got['buffer']:.2f}",
                     f"{transports['buffer']}/{transports['memfds']}"])
    return table(["MiB in+out", "buffer ms", "memfds ms", "memfds/buffer", "transport"], rows)


def measure_big(clients: dict[str, kiln.Client], reps: int) -> list[str]:
    """A 256 MiB f32 x+1 round trip; MB/s = (bytes in + bytes out) / wall."""
    n = 64 * 1024 * 1024
    nbytes = 4 * n
    log(f"big tensor: 256 MiB x+1, {reps} timed round trips after one warm-up")
    x = torch.randn(n, generator=torch.Generator().manual_seed(0))
    lines = []
    for transport, client in clients.items():
        build = kiln_compile(client, AddOne(), (x,), "add_one_256MiB")
        if build.compiled is None:
            return [f"256 MiB x+1: (compile fails) {build.why}"]
        compiled = build.compiled
        feed = FreshInputs([x])
        feed.bump()
        compiled(*feed.tensors)  # warm-up: load, first touch
        walls, phases = [], []
        for _ in range(reps):
            feed.bump()
            t0 = time.perf_counter()
            y = compiled(*feed.tensors)
            walls.append(time.perf_counter() - t0)
            phases.append(dict(compiled.last_timings))
        assert compiled.last_transport == transport, compiled.last_transport
        err = rel_l2(y, [feed.tensors[0] + 1])
        del y
        wall = statistics.median(walls)
        mid = phases[walls.index(sorted(walls)[len(walls) // 2])]
        lines += [
            f"256 MiB f32 x+1 round trip, {transport}: median of {reps} {wall:.3f} s -> "
            f"{2 * nbytes / wall / 1e6:.0f} MB/s (in + out = {2 * nbytes / 1e6:.0f} MB, "
            f"1 MB = 10^6 B)",
            f"  that call: upload {mid['upload']:.3f} s, daemon+agent total {mid['total']:.3f} s "
            f"(fetch {mid['fetch']:.3f}, run {mid['run']:.3f}), download {mid['download']:.3f} s; "
            f"relL2 vs x+1 {format_error(err)}",
        ]
    return lines


# --- the report ---------------------------------------------------------------

def format_ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1e3:.3f}"


def format_ratio(r: float | None) -> str:
    return "-" if r is None else f"{r:.2f}"


def format_error(e: float | None) -> str:
    if e is None:
        return "-"
    return f"{e:.1e}" + (" !" if not e <= ERROR_FLAG else "")


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """Columns as wide as their widest cell; the first left-aligned."""
    widths = [max(len(str(r[i])) for r in [headers, *rows]) for i in range(len(headers))]

    def line(r: Sequence[str]) -> str:
        return "  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w)
                         for i, (c, w) in enumerate(zip(r, widths))).rstrip()
    return [line(headers), "  ".join("-" * w for w in widths), *map(line, rows)]


def geomean(values: Sequence[float]) -> float | None:
    return math.exp(statistics.fmean(math.log(v) for v in values)) if values else None


def model_table(rows: Sequence[ModelRow], threads: Sequence[int]) -> list[str]:
    headers = ["model", "thr", "kiln e2e", "kiln run", "eager", "inductor", "ort", "best",
               "kiln/best", "run/best", "err kiln", "err inductor", "err ort"]
    body = []
    for r in rows:
        best = r.best()
        cell = lambda name: r.cells.get(name) or format_ms(r.seconds.get(name))  # noqa: E731
        body.append([r.label, str(r.threads), cell("kiln"),
                     "" if "kiln" in r.cells else format_ms(r.device_run),
                     *map(cell, BASELINES), best[0] if best else "-",
                     format_ratio(r.kiln_ratio()), format_ratio(r.run_ratio()),
                     *(format_error(r.errors.get(n)) for n in ("kiln", "inductor", "ort"))])
    for t in threads:
        at = [r for r in rows if r.threads == t]
        e2e = [x for x in (r.kiln_ratio() for r in at) if x is not None]
        run = [x for x in (r.run_ratio() for r in at) if x is not None]
        body.append([f"geomean over {len(e2e)} of {len(at)} rows", str(t), *[""] * 6,
                     format_ratio(geomean(e2e)), format_ratio(geomean(run)), "", "", ""])
    return table(headers, body)


def print_report(args: argparse.Namespace, parts: dict[str, list[str]],
                 notes: Sequence[str]) -> None:
    out = ["", f"Kiln speed benchmark ({'quick' if args.quick else 'full'} run: "
                f"{args.rounds} rounds of ~{args.round_s * 1e3:.0f} ms per system)",
           *host_lines(), ""]
    if "models" in parts:
        out += ["Models: median ms per call over interleaved rounds. kiln e2e = compiled(*x) "
                "through kilnd; kiln run = the agent's run alone (last_timings['run']);",
                "best = fastest of eager/inductor/ort; err = relative L2 vs eager "
                f"(! past {ERROR_FLAG:g}); Kiln's agent runs thr compute threads; "
                f"kernel library: {args.kernel_library or 'kilnd default (onednn on x86-64)'}.",
                *parts["models"], ""]
    for key in ("matmul", "overhead", "mid", "big", "linalg", "kernels"):
        if key in parts:
            out += [*parts[key], ""]
    if notes:
        out += ["Notes:", *(f"  {n}" for n in notes)]
    print("\n".join(out), flush=True)


# --- main ---------------------------------------------------------------------

def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true",
                   help="fewer and shorter rounds, fewer calls (a smoke test, not numbers)")
    p.add_argument("--models", default=",".join(MODELS),
                   help=f"comma list of {', '.join(MODELS)} (default: all)")
    p.add_argument("--threads", default="1,2", help="comma list of thread counts (default 1,2)")
    p.add_argument("--kernel-library", default="",
                   help="Kiln's CompileOptions.kernel_library: onednn or none (default: "
                        "kilnd's, onednn on x86-64); none measures generated code only")
    p.add_argument("--sections", default=",".join(SECTIONS),
                   help=f"comma list of {', '.join(SECTIONS)} (default: all)")
    p.add_argument("--rounds", type=int, help="interleaved rounds (default 15; --quick 3)")
    p.add_argument("--address", help="HOST:PORT of a running kilnd (default: start one)")
    p.add_argument("--build-dir", default=os.environ.get("KILN_BUILD_DIR", "build"),
                   help="where bin/kilnd is (default build, or $KILN_BUILD_DIR)")
    args = p.parse_args(argv)
    args.models = [m for m in args.models.split(",") if m]
    args.sections = [s for s in args.sections.split(",") if s]
    for kind, chosen, known in (("model", args.models, MODELS), ("section", args.sections,
                                                                  SECTIONS)):
        unknown = [c for c in chosen if c not in known]
        if unknown:
            p.error(f"unknown {kind} {', '.join(unknown)}; choose from {', '.join(known)}")
    try:
        args.threads = [int(t) for t in args.threads.split(",") if t]
    except ValueError:
        p.error(f"--threads takes a comma list of integers, not {args.threads!r}")
    if not args.threads or min(args.threads) < 1:
        p.error("--threads needs counts of at least 1")
    args.rounds = args.rounds or (3 if args.quick else 15)
    args.round_s = 0.02 if args.quick else 0.1
    args.overhead_calls = 100 if args.quick else 500
    args.big_reps = 1 if args.quick else 3
    args.mid_calls = 40 if args.quick else 200
    args.peak_s = 0.05 if args.quick else 0.2
    if args.kernel_library not in ("", "onednn", "none"):
        p.error(f"--kernel-library is onednn or none, not {args.kernel_library!r}")
    if args.kernel_library:
        KILN_OPTIONS["kernel_library"] = args.kernel_library
    build_dir = pathlib.Path(args.build_dir)
    args.build_dir = build_dir if build_dir.is_absolute() else REPO / build_dir
    return args


def run(args: argparse.Namespace, workdir: pathlib.Path) -> None:
    parts: dict[str, list[str]] = {}
    notes: list[str] = []
    peak_core = None
    if "matmul" in args.sections:
        peaks, why = fma_peak(workdir, args.peak_s)
        if peaks:
            peak_core = max(peaks.values())
            notes.insert(0, "FMA peak, 1 thread (bench/fma_peak.c, cc -O3 -march=native): " +
                         ", ".join(f"{k} {v:.1f} GFLOP/s" for k, v in peaks.items()))
        else:
            notes.append(why)
    with daemon_addresses(args, workdir) as addresses, contextlib.ExitStack() as stack:
        by_address = {a: stack.enter_context(kiln.Client(a, direct=True))
                      for a in set(addresses.values())}
        clients = {t: by_address[a] for t, a in addresses.items()}
        client = clients[args.threads[0]]
        for address, c in by_address.items():
            if not [d for d in c.devices() if d.kind == "cpu"]:
                sys.exit(f"bench: the daemon at {address} has no cpu device")
        if "models" in args.sections:
            rows = []
            for key in args.models:
                rows += measure_model(clients, key, MODELS[key], args.threads, args, workdir,
                                      notes)
            parts["models"] = model_table(rows, args.threads)
        if "linalg" in args.sections:
            from bench_linalg import measure_linalg
            parts["linalg"] = measure_linalg(clients, args.threads, args, sys.modules[__name__])
        if "kernels" in args.sections:
            from bench_kernels import measure_kernels
            parts["kernels"] = measure_kernels(clients, args.threads, args,
                                               sys.modules[__name__])
        if "matmul" in args.sections:
            peak_text = f"{peak_core:.1f} GFLOP/s per core" if peak_core else "not measured"
            parts["matmul"] = [
                f"Matmul 1024^3 f32 (x @ w, w resident on the device): GFLOP/s and % of the "
                f"FMA peak ({peak_text}, times the thread count);",
                "kiln e2e uploads x (4 MiB) and downloads x @ w (4 MiB) on every call.",
                *table(["thr", "kiln e2e", "%peak", "kiln run", "%peak", "err kiln",
                        "eager", "%peak"],
                       measure_matmul(clients, args.threads, peak_core, args))]
        torch.set_num_threads(args.threads[0])
        # Every transport to the first daemon: a direct channel to the agent
        # (what a client on kilnd's machine uses for a model called again),
        # kilnd's local socket (memfds) and gRPC (what a remote client uses).
        transports = {"direct": client}
        if {"overhead", "mid", "big"} & set(args.sections):
            transports["local"] = stack.enter_context(
                kiln.Client(addresses[args.threads[0]], direct=False))
            transports["grpc"] = stack.enter_context(
                kiln.Client(addresses[args.threads[0]], local=False))
            if not client.local_execute:
                notes.append(f"kilnd's local socket is not reachable: "
                             f"{client.executor.local_executor.unavailable_reason if client.executor.local_executor else 'off'}")
                del transports["direct"], transports["local"]
        if "overhead" in args.sections:
            parts["overhead"] = ["Per-call overhead (alternating calls, "
                                 f"{args.overhead_calls} each):",
                                 *measure_overhead(transports, args.overhead_calls)]
        if "mid" in args.sections and "direct" in transports:
            unbuffered = stack.enter_context(kiln.Client(addresses[args.threads[0]],
                                                         direct=True))
            # Its channels never ask for an exchange buffer (as under
            # KILN_DIRECT_EXCHANGE=0): each tensor in a sealed memfd.
            unbuffered.executor.local_executor.exchange = False
            if not client.executor.local_executor.exchange:
                notes.append("mid-size section: KILN_DIRECT_EXCHANGE=0 is set, so the "
                             "buffer column measures memfds too")
            parts["mid"] = ["Mid-size tensors on a direct channel: x * 2 + 1, median ms per "
                            "call end to end, with the exchange buffer and without (memfds):",
                            *measure_mid(client, unbuffered, args.mid_calls)]
        if "big" in args.sections:
            parts["big"] = ["Big tensors:", *measure_big(transports, args.big_reps)]
    print_report(args, parts, notes)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    # SIGTERM unwinds like Ctrl-C, so the daemon we started is stopped.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    with tempfile.TemporaryDirectory(prefix="kiln-bench-speed-") as tmp:
        run(args, pathlib.Path(tmp))
    return 0


if __name__ == "__main__":
    sys.exit(main())
