"""The ``kiln`` CLI's commands: each takes the parsed arguments, a Client and
a Reporter, prints its result to stdout and raises CliError / KilnError for
anything a person has to act on (kiln.cli turns those into one line + hint)."""

from __future__ import annotations

import argparse
import importlib
import json
import pathlib
import time
from typing import Any, Sequence

import torch
from google.protobuf import text_format

from kiln.cli_format import CliError, format_bytes, format_table
from kiln.cli_progress import Reporter
from kiln.client import Client, CompiledModel
from kiln.export import serialize_exported
from kiln.placement import placement_policy
from kiln.tensors import PROTO_TO_DTYPE

__all__ = ["cmd_devices", "cmd_compile", "cmd_run", "cmd_cache_stats", "cmd_cache_gc",
           "cmd_cache_salt", "cmd_cache_why", "load_exported", "load_inputs"]

STAGE_EXTENSIONS = {"llvm-ir": ".ll", "asm": ".s"}


def _type_str(t: Any) -> str:
    dtype = PROTO_TO_DTYPE.get(t.dtype)
    name = str(dtype).removeprefix("torch.") if dtype is not None else f"dtype{t.dtype}"
    return f"{name}[{', '.join(map(str, t.shape))}]"


def import_modules(names: Sequence[str]) -> None:
    """``--import``: the modules that register the custom ops an archive
    calls (torch.export.load resolves every op by name)."""
    for name in names:
        try:
            importlib.import_module(name)
        except Exception as e:  # an import runs the module's code
            raise CliError(f"--import {name}: {type(e).__name__}: {e}",
                           "name a module on the Python path (PYTHONPATH) that registers "
                           "the archive's custom ops with torch.library") from None


def load_exported(path: pathlib.Path) -> torch.export.ExportedProgram:
    """Loads a torch.export archive (.pt2) with torch.export.load."""
    if not path.is_file():
        raise CliError(f"no such model file: {path}",
                       "pass a .pt2 archive written by torch.export.save(torch.export.export(model, args), PATH)")
    try:
        return torch.export.load(str(path))
    except Exception as e:  # torch raises many types for a bad archive
        raise CliError(f"{path} is not a torch.export archive this process can load "
                       f"({type(e).__name__}: {e})",
                       "write one with torch.export.save(torch.export.export(model, args), "
                       "PATH); if it calls custom ops, --import the module that registers "
                       "them") from None


def load_inputs(paths: Sequence[pathlib.Path]) -> list[torch.Tensor]:
    """Each file holds one tensor or a tuple/list of tensors (.pt via
    torch.save, or .npy); the flattened tensors are the inputs in order."""
    inputs: list[torch.Tensor] = []
    for p in paths:
        if not p.is_file():
            raise CliError(f"no such input file: {p}", "save inputs with torch.save(tensor, PATH)")
        try:
            if p.suffix == ".npy":
                import numpy as np
                value: Any = torch.from_numpy(np.load(p, allow_pickle=False))
            else:
                value = torch.load(p, weights_only=True)
        except Exception as e:
            raise CliError(f"cannot read input {p} ({type(e).__name__}: {e})",
                           "inputs are torch.save'd tensors (or tuples of them) or .npy arrays") from None
        values = list(value) if isinstance(value, (tuple, list)) else [value]
        for i, v in enumerate(values):
            if not isinstance(v, torch.Tensor):
                raise CliError(f"input {p} item {i} is a {type(v).__name__}, not a tensor",
                               "inputs are torch.save'd tensors (or tuples of them)")
        inputs.extend(values)
    return inputs


def machine_options(args: argparse.Namespace) -> dict[str, str]:
    """--cpu, --cpu-features and --convolution-algorithm as CompileOptions
    fields (only those given)."""
    return {k: v for k, v in (("cpu", args.cpu), ("cpu_features", args.cpu_features),
                              ("convolution_algorithm", args.convolution_algorithm)) if v}


def compile_file(client: Client, path: pathlib.Path, target: str, opt_level: int,
                 reporter: Reporter, dump_stages: bool = False,
                 placement: Any = None, machine: dict[str, str] | None = None
                 ) -> tuple[torch.export.ExportedProgram, CompiledModel]:
    ep = load_exported(path)
    serialized, out_spec, in_spec = serialize_exported(ep, path.stem)
    t0 = time.perf_counter()
    with reporter.upload(f"uploading weights of {path.name}") as progress:
        client.blobs.ensure_tensors(list(serialized.parameters.values()), progress=progress)
    upload = time.perf_counter() - t0
    with reporter.spinner(f"compiling {path.name} for {target}"):
        compiled = client.compile_graph(
            serialized.graph, target=target,
            options={"opt_level": opt_level, "dump_stages": dump_stages, **(machine or {})},
            parameters=serialized.parameters, out_spec=out_spec, in_spec=in_spec,
            upload_seconds=upload, placement=placement, convention=serialized.convention)
    return ep, compiled


def placement_from_args(args: argparse.Namespace) -> Any:
    """The PlacementPolicy --fallback and --max-fallback-fraction ask for."""
    try:
        return placement_policy(args.fallback, args.max_fallback_fraction)
    except ValueError as e:
        raise CliError(str(e), "use --max-fallback-fraction with --fallback cpu, "
                               "and a value in 0..1") from None


def cache_answer(compiled: CompiledModel) -> str:
    """'no', 'yes', or 'yes (shared tier)' for a kilnd --remote-cache hit."""
    if not compiled.cache_hit:
        return "no"
    return "yes (shared tier)" if compiled.remote_cache_hit else "yes"


def describe_compiled(compiled: CompiledModel) -> str:
    m, t = compiled.manifest, compiled.timings
    if compiled.partitioned:
        return "\n".join([
            f"{'executable':<12} partitioned: {len(compiled.placement.segments)} segments",
            f"{'cache hit':<12} {cache_answer(compiled)}",
            f"{'compile key':<12} {compiled.compile_key}",
            f"{'times':<12} upload {t['upload']:.3f} s, compile {t['compile']:.3f} s",
            str(compiled.placement)])
    rows = [
        ("executable", compiled.digest),
        ("cache hit", cache_answer(compiled)),
        ("compile key", compiled.compile_key),
        ("target", f"{m.target} ({m.triple}, {m.format})"),
        # What runs the nodes: the kernel library (onednn, aie) or generated code.
        ("units", ", ".join(f"{unit} {len(names)}"
                            for unit, names in compiled.placement.units().items()) or "-"),
        ("inputs", ", ".join(f"{a.name}: {_type_str(a.type)}" for a in m.inputs) or "-"),
        ("outputs", ", ".join(f"{a.name}: {_type_str(a.type)}" for a in m.outputs) or "-"),
        ("parameters", str(len(m.parameters))),
        ("times", f"upload {t['upload']:.3f} s, compile {t['compile']:.3f} s "
                  f"(daemon: queue {t['server_queue']:.3f} s, compile {t['server_compile']:.3f} s)"),
    ]
    return "\n".join(f"{k:<12} {v}" for k, v in rows)


def write_dump(directory: pathlib.Path, compiled: CompiledModel) -> list[pathlib.Path]:
    """The module after every compiler stage (``0-aten.mlir`` ... ``4-asm.s``),
    the graph that was compiled, the manifest, the op report and the compile
    summary."""
    directory.mkdir(parents=True, exist_ok=True)
    stages = []
    for index, (stage, text) in enumerate(compiled.stage_dumps().items()):
        path = directory / f"{index}-{stage}{STAGE_EXTENSIONS.get(stage, '.mlir')}"
        path.write_text(text)
        stages.append(path)
    graph = directory / "graph.pb"
    graph.write_bytes(compiled.graph.SerializeToString())
    manifest = directory / "manifest.textproto"
    manifest.write_text(text_format.MessageToString(compiled.manifest))
    report = directory / "op-report.txt"
    report.write_text(compiled.op_report.table(exact=True) + "\n")
    summary = directory / "compile.json"
    summary.write_text(json.dumps({
        "executable": compiled.digest, "cache_hit": compiled.cache_hit,
        "remote_cache_hit": compiled.remote_cache_hit,
        "compile_key": compiled.compile_key, "target": compiled.target,
        "timings_s": compiled.timings}, indent=2) + "\n")
    return [*stages, graph, manifest, report, summary]


def cmd_devices(args: argparse.Namespace, client: Client, reporter: Reporter) -> None:
    devices = client.devices(kind=args.kind or "")
    if not devices:
        print("no devices registered" + (f" of kind {args.kind}" if args.kind else ""))
        return
    rows = [(d.id, d.kind, "simulated" if d.simulated else "hardware",
             d.state.removeprefix("DEVICE_STATE_"), d.queue_depth, d.agent_id,
             ", ".join(f"{k}={v}" for k, v in sorted(d.properties.items())))
            for d in devices]
    print(format_table(("ID", "KIND", "DEVICE", "STATE", "QUEUE", "AGENT", "PROPERTIES"),
                       rows))


def cmd_compile(args: argparse.Namespace, client: Client, reporter: Reporter) -> None:
    import_modules(args.imports)
    _, compiled = compile_file(client, args.model, args.target, args.opt_level, reporter,
                               dump_stages=args.dump is not None,
                               placement=placement_from_args(args),
                               machine=machine_options(args))
    print(describe_compiled(compiled))
    if args.dump:
        files = write_dump(args.dump, compiled)
        print(f"dump         {', '.join(str(f) for f in files)}")
    if getattr(args, "op_report", False):
        print()
        print(compiled.op_report.table(exact=args.exact))


def _summary(t: Any) -> str:
    if not isinstance(t, torch.Tensor):  # a Python number the program returns
        return f"{type(t).__name__} {t!r}"
    head = f"{str(t.dtype).removeprefix('torch.')}{list(t.shape)}"
    if t.numel() == 0:
        return head
    f = t.detach().double()
    text = f"{head}  min {f.min().item():.6g}  max {f.max().item():.6g}  mean {f.mean().item():.6g}"
    if t.numel() <= 16:
        text += f"\n    {t.flatten().tolist()}"
    return text


def cmd_run(args: argparse.Namespace, client: Client, reporter: Reporter) -> None:
    inputs = load_inputs(args.input)     # before compiling: a bad input fails fast
    import_modules(args.imports)
    ep, compiled = compile_file(client, args.model, args.target, args.opt_level, reporter,
                                placement=placement_from_args(args),
                                machine=machine_options(args))
    expected = compiled.call_inputs
    if len(inputs) != len(expected):
        raise CliError(
            f"{args.model} takes {len(expected)} input(s) "
            f"({', '.join(f'{a.name}: {_type_str(a.type)}' for a in expected)}); got {len(inputs)}",
            "pass one --input per model input, in order (a file may hold a tuple of tensors)")
    # A program may write into its inputs (the call leaves eager's values
    # there): eager's reference runs on the inputs as they were.
    originals = [t.clone() for t in inputs] if args.compare else []
    with reporter.spinner(f"running on {args.target}"):
        result = compiled(*inputs)
    outputs = list(result) if isinstance(result, (tuple, list)) else [result]
    what = (f"partitioned ({len(compiled.placement.segments)} segments, "
            f"{compiled.placement.message.cpu_nodes} ops on the host CPU)"
            if compiled.partitioned else compiled.digest)
    print(f"executable {what} ({'cache hit' if compiled.cache_hit else 'compiled'}) "
          f"on {compiled.last_device_id or args.target}")
    for i, out in enumerate(outputs):
        print(f"output {i}: {_summary(out)}")
    if args.compare:
        if compiled.seed_input is not None:
            print("note: the model draws random numbers; Kiln's follow eager's "
                  "distributions, not its values")
        with torch.no_grad():
            ref = ep.module()(*originals)
        refs = list(ref) if isinstance(ref, (tuple, list)) else [ref]
        for i, (out, r) in enumerate(zip(outputs, refs)):
            out, r = torch.as_tensor(out), torch.as_tensor(r)
            diff = (out.double() - r.double()).abs().max().item() if out.numel() else 0.0
            print(f"output {i}: max |kiln - eager| = {diff:.3g}")
    t = compiled.last_timings
    cpu = f", host cpu {t['cpu']:.4f} s" if "cpu" in t else ""
    print(f"times: queue {t.get('queue', 0.0):.4f} s, fetch {t.get('fetch', 0.0):.4f} s, "
          f"load {t.get('load', 0.0):.4f} s, run {t.get('run', 0.0):.4f} s{cpu}, "
          f"wall {t['wall']:.4f} s")
    counters = compiled.last_counters
    if counters.get("instructions"):
        print(f"simulated instructions: {counters['instructions']:,}")
    if counters.get("estimated_cycles"):
        print(f"estimated device cycles: {counters['estimated_cycles']:,}")
    if counters.get("numeric_error"):
        e = counters["numeric_error"]
        print(f"numeric error ({e['numeric_type']} against f32): max |error| "
              f"{e['max_abs_error']:.3g} of max |f32| {e['max_abs_reference']:.3g}, "
              f"rms {e['rms_error']:.3g}")
    if args.output:
        torch.save(tuple(outputs) if len(outputs) != 1 else outputs[0], args.output)
        print(f"saved {len(outputs)} output(s) to {args.output}")


def cmd_cache_stats(args: argparse.Namespace, client: Client, reporter: Reporter) -> None:
    s = client.cache.stats()
    lookups = s.compile_hits + s.compile_misses
    rate = f" ({100 * s.compile_hits / lookups:.0f}% hits)" if lookups else ""
    rows = [
        ("blobs", f"{s.blob_count} ({format_bytes(s.blob_bytes)})"),
        ("capacity", format_bytes(s.capacity_bytes) if s.capacity_bytes else "unlimited"),
        ("pinned", format_bytes(s.pinned_bytes)),
        ("executables", str(s.executable_count)),
        ("compiles", f"{s.compile_hits} hits, {s.compile_misses} misses{rate}"),
        ("evicted", f"{s.evicted_blobs} blobs ({format_bytes(s.evicted_bytes)})"),
        ("salt", repr(s.salt) if s.salt else "(none)"),
    ]
    print("\n".join(f"{k:<12} {v}" for k, v in rows))


def cmd_cache_gc(args: argparse.Namespace, client: Client, reporter: Reporter) -> None:
    target = args.target_bytes
    with reporter.spinner("collecting garbage"):
        gc = client.cache.collect_garbage(target)
    print(f"evicted {gc.evicted_blobs} blobs ({format_bytes(gc.evicted_bytes)}); "
          f"{format_bytes(gc.remaining_bytes)} left")


def cmd_cache_salt(args: argparse.Namespace, client: Client, reporter: Reporter) -> None:
    previous = client.cache.set_salt(args.salt)
    print(f"salt set to {args.salt!r} (was {previous!r}); existing executables are no longer "
          "served and models compile afresh")


def cmd_cache_why(args: argparse.Namespace, client: Client, reporter: Reporter) -> None:
    serialized, _, _ = serialize_exported(load_exported(args.model), args.model.stem)
    why = client.cache.explain_miss(
        serialized.graph, args.target,
        {"opt_level": args.opt_level, **machine_options(args)}, args.candidates)
    print(f"compile key  {why.compile_key}")
    if why.cached:
        print(f"cached       yes: compiling {args.model.name} for {args.target} is a hit")
        return
    if not why.candidates:
        print(f"cached       no, and no cached key belongs to a graph named "
              f"'{why.graph_name}'")
        return
    print(f"cached       no; the nearest cached keys of graph '{why.graph_name}':")
    for c in why.candidates:
        print(f"\n  {c.compile_key}" + (f"  (executable {c.executable[:16]}...)"
                                         if c.executable else ""))
        for d in c.differences:
            print(f"    {d.component:<16} {d.detail}")


def cmd_token_new(args: argparse.Namespace) -> None:
    """Prints a fresh token (keep it secret) and its --auth-tokens line."""
    from kiln.credentials import new_token, token_grant_line
    token = new_token()
    line = token_grant_line(args.name, args.role, token)
    print(f"token: {token}")
    print(f"--auth-tokens line: {line}")
