#!/usr/bin/env python3
"""Kiln demo: compile an MLP and a transformer encoder block on a Kiln daemon,
run them remotely and compare with PyTorch eager.

Two routes per model:
  * AOT: torch.export.export(...) → Client.compile(...) → compiled(*inputs)
  * JIT: torch.compile(model, backend=kiln.backend(address))

    python client_py/examples/demo.py --address 127.0.0.1:50051 [--expect-cache-hits]
"""

from __future__ import annotations

import argparse
import sys
import time

import torch

import kiln
from kiln.testing import MLP, EncoderBlock, example_inputs


def wait_for_devices(client: kiln.Client, kinds: set[str], timeout: float
                     ) -> list[kiln.DeviceInfo]:
    deadline = time.monotonic() + timeout
    while True:
        try:
            devices = client.devices()
            if kinds <= {d.kind for d in devices}:
                return devices
        except kiln.UnavailableError:
            if time.monotonic() > deadline:
                raise
        if time.monotonic() > deadline:
            raise SystemExit(f"no {'/'.join(sorted(kinds))} device registered with "
                             f"{client.address} after {timeout:.0f}s")
        time.sleep(0.1)


def fmt_ms(seconds: float) -> str:
    return f"{seconds * 1e3:8.1f} ms"


def report(label: str, out: torch.Tensor, ref: torch.Tensor, compiled: kiln.CompiledModel) -> float:
    diff = (out - ref).abs().max().item()
    first = ", ".join(f"{v:+.5f}" for v in out.flatten()[:4].tolist())
    eager = ", ".join(f"{v:+.5f}" for v in ref.flatten()[:4].tolist())
    t, e = compiled.timings, compiled.last_timings
    print(f"  {label}")
    print(f"    executable {compiled.digest[:16]}…  cache_hit={compiled.cache_hit}")
    print(f"    kiln : [{first}, …]  shape {tuple(out.shape)}")
    print(f"    eager: [{eager}, …]")
    print(f"    max |kiln - eager| = {diff:.3e}")
    print(f"    upload {fmt_ms(t['upload'])}  compile {fmt_ms(t['compile'])}  "
          f"execute {fmt_ms(e['wall'])} (queue {fmt_ms(e['queue'])}, run {fmt_ms(e['run'])})")
    return diff


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--address", required=True, help="kilnd host:port")
    parser.add_argument("--target", default="cpu")
    parser.add_argument("--expect-cache-hits", action="store_true",
                        help="fail unless every compile is served from the cache")
    parser.add_argument("--wait", type=float, default=60.0,
                        help="seconds to wait for a device to register")
    parser.add_argument("--riscv64", action="store_true",
                        help="also run the MLP on a simulated riscv64 device (kilnd "
                             "--local-agents cpu,qemu) and show its instruction count")
    args = parser.parse_args()

    client = kiln.Client(args.address)
    kinds = {"cpu", "riscv64"} if args.riscv64 else {"cpu"}
    devices = wait_for_devices(client, kinds, args.wait)
    print(f"kiln daemon {args.address}: " + ", ".join(
        f"{d.id} ({d.kind}{', ' + d.properties['cpu'] if 'cpu' in d.properties else ''}, "
        f"{d.state.removeprefix('DEVICE_STATE_')})" for d in devices))
    hits, diffs = [], []
    models = [("MLP (3 Linear + GELU)", MLP(d_in=64, d_hidden=128, d_out=10)),
              ("Transformer encoder block", EncoderBlock(d_model=64, n_heads=4, d_ff=128))]
    for i, (name, model) in enumerate(models):
        torch.manual_seed(100 + i)
        for p in model.parameters():
            torch.nn.init.normal_(p, std=0.1)
        model.eval()
        inputs = example_inputs(model, batch=4, seed=i)
        with torch.no_grad():
            ref = model(*inputs)
        print(f"\n== {name}")

        ep = torch.export.export(model, inputs)
        compiled = client.compile(ep, target=args.target)
        out = compiled(*inputs)
        diffs.append(report("torch.export + Client.compile", out, ref, compiled))
        hits.append(compiled.cache_hit)

        torch._dynamo.reset()
        be = kiln.backend(client, target=args.target)
        fast = torch.compile(model, backend=be)
        t0 = time.perf_counter()
        out = fast(*inputs)
        first_call = time.perf_counter() - t0
        t0 = time.perf_counter()
        out = fast(*inputs)
        second_call = time.perf_counter() - t0
        for c in [c for g in be.compiled_graphs for c in g.specializations]:
            diffs.append(report("torch.compile(backend=kiln.backend)", out, ref, c))
            hits.append(c.cache_hit)
        print(f"    torch.compile first call (trace+lower+compile+run) {fmt_ms(first_call)}, "
              f"second call {fmt_ms(second_call)}")

    if args.riscv64:
        torch.manual_seed(100)
        model = MLP(d_in=64, d_hidden=128, d_out=10).eval()
        inputs = example_inputs(model, batch=4, seed=0)
        with torch.no_grad():
            ref = model(*inputs)
        print("\n== MLP on riscv64 (rv64gcv, VLEN 128) under qemu-riscv64")
        compiled = client.compile(torch.export.export(model, inputs), target="riscv64")
        out = compiled(*inputs)
        diffs.append(report(f"Client.compile(target='riscv64') on {compiled.last_device_id}",
                            out, ref, compiled))
        hits.append(compiled.cache_hit)
        print(f"    simulated instructions: {compiled.last_counters['instructions']:,}")

    worst = max(diffs)
    print(f"\nworst max |kiln - eager| = {worst:.3e}; cache hits: {sum(hits)}/{len(hits)}")
    if worst > 1e-4:
        print("FAIL: results differ from eager beyond 1e-4", file=sys.stderr)
        return 1
    if args.expect_cache_hits and not all(hits):
        print("FAIL: expected every compile to be a cache hit", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
