"""Build-farm benchmark (issue 16): what the shared cache tier saves.

Starts a real bazel-remote (v2.6.2, from $KILN_TOOLS_DIR/bin) and two kilnd
replicas (own cache dirs, own local CPU agents, both --remote-cache at it),
then prints, in one run:

  * torchvision resnet18 (224², batch 1, random weights): the cold compile on
    replica A (nothing cached anywhere), a remote hit on replica B (A's
    executable downloaded from bazel-remote and checked), and a local hit on
    B (its own disk); the ratio of each hit to the cold compile;
  * the bytes the remote tier moved (A's uploads, B's downloads, from their
    kiln_remote_cache_bytes_total: the executable and the weights, which B
    copies from the shared tier instead of asking its client for them);
  * calls per second of an MLP (kiln.testing.MLP, batch 64) from --clients
    client threads for --seconds, through replica A alone and through A and B
    alike (each thread keeps to one replica, half on each).

Both replicas share this machine's cores, so the two-replica figure shows the
serving overhead of a second daemon here, not what a second host adds. A
benchmark, not a test: it never fails on the numbers (it does check outputs
against eager).

Usage: python bench/bench_farm.py [--build-dir build] [--clients 4] [--seconds 5]
                                   [--agent-threads 1|auto] [--omp-wait-policy passive]
"""

from __future__ import annotations

import argparse
import os
import pathlib
import re
import sys
import tempfile
import threading
import time
import urllib.request

import torch

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "e2e"))

import kiln  # noqa: E402
from kiln.export import serialize_model  # noqa: E402
from kiln.testing import MLP  # noqa: E402


def metric(daemon, name: str, **labels: str) -> float:
    with urllib.request.urlopen(f"http://127.0.0.1:{daemon.metrics_port}/metrics",
                                timeout=10) as resp:
        text = resp.read().decode()
    want = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    for line in text.splitlines():
        m = re.match(r"^(\w+)(?:\{(.*)\})? (\S+)$", line)
        if m and m.group(1) == name and (m.group(2) or "") == want:
            return float(m.group(3))
    return 0.0


# Clients stay open while their compiled models are called; closed at exit.
CLIENTS: list = []


def client_of(daemon) -> kiln.Client:
    client = kiln.Client(daemon.address, timeout=600)
    CLIENTS.append(client)
    return client


def timed_compile(daemon, serialized, out_spec, in_spec):
    client = client_of(daemon)
    t0 = time.perf_counter()
    compiled = client.compile_serialized(serialized, out_spec=out_spec, in_spec=in_spec)
    return time.perf_counter() - t0, compiled


def calls_per_second(daemons, model, x, clients: int, seconds: float) -> float:
    exported = torch.export.export(model, (x,))
    serialized, out_spec, in_spec = serialize_model(exported)
    compiled = []
    for d in daemons:
        m = client_of(d).compile_serialized(serialized, out_spec=out_spec, in_spec=in_spec)
        torch.testing.assert_close(m(x), model(x), rtol=1e-4, atol=1e-5)
        compiled.append(m)
    counts = [0] * clients
    stop = time.monotonic() + seconds

    def worker(i: int) -> None:
        m = compiled[i % len(compiled)]
        while time.monotonic() < stop:
            m(x)
            counts[i] += 1

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(clients)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(counts) / (time.perf_counter() - t0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default=os.environ.get("KILN_BUILD_DIR", "build"))
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--agent-threads", default="1",
                        help="each replica's cpu agent --compute-threads (default 1: two "
                             "agents share this host's cores; 'auto' gives each all of them)")
    parser.add_argument("--omp-wait-policy", default="",
                        help="the agents' OMP_WAIT_POLICY (default: unset, libgomp spins; "
                             "'passive' for agents that share cores, device_agents/README.md)")
    args = parser.parse_args()
    os.environ["KILN_BUILD_DIR"] = str(pathlib.Path(args.build_dir).resolve())
    from bazel_remote import BazelRemote  # noqa: E402
    from support import Kilnd  # noqa: E402  (reads KILN_BUILD_DIR)
    import torchvision

    torch.manual_seed(0)
    net = torchvision.models.resnet18().eval()
    x = torch.randn(1, 3, 224, 224)
    serialized, out_spec, in_spec = serialize_model(torch.export.export(net, (x,)))
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp)
        remote = BazelRemote(work).start()
        flags = ("--remote-cache", remote.url)
        env = {"KILN_AGENT_COMPUTE_THREADS": args.agent_threads}
        if args.omp_wait_policy:
            env["OMP_WAIT_POLICY"] = args.omp_wait_policy
        a = Kilnd(work, work / "cache-a", name="a", extra_args=flags, env=env).start()
        b = Kilnd(work, work / "cache-b", name="b", extra_args=flags, env=env).start()
        try:
            print("resnet18 224² b1 compile:", file=sys.stderr)
            # The Compile RPC alone (CompiledModel.timings["compile"]): the
            # weights' upload to each replica is the same either way.
            _, on_a = timed_compile(a, serialized, out_spec, in_spec)
            _, on_b = timed_compile(b, serialized, out_spec, in_spec)
            _, again = timed_compile(b, serialized, out_spec, in_spec)
            cold, remote_hit, local_hit = (m.timings["compile"] for m in (on_a, on_b, again))
            upload_a, upload_b = on_a.timings["upload"], on_b.timings["upload"]
            assert not on_a.cache_hit and on_b.remote_cache_hit and again.cache_hit
            assert on_b.digest == on_a.digest
            torch.testing.assert_close(on_b(x), net(x), rtol=1e-4, atol=1e-4)
            written = metric(a, "kiln_remote_cache_bytes_total", direction="written")
            read = metric(b, "kiln_remote_cache_bytes_total", direction="read")

            torch.manual_seed(1)
            mlp = MLP(256, 512, 256).eval()
            xm = torch.randn(64, 256)
            one = calls_per_second([a], mlp, xm, args.clients, args.seconds)
            two = calls_per_second([a, b], mlp, xm, args.clients, args.seconds)
        finally:
            for client in CLIENTS:
                client.close()
            for d in (a, b):
                d.assert_stops_cleanly()
            remote.stop()

    cpu = next((line.split(":", 1)[1].strip() for line in
                open("/proc/cpuinfo") if line.startswith("model name")), "?")
    print(f"host: {cpu}, {os.cpu_count()} cores")
    print("| resnet18 224² b1 | seconds | / cold |")
    print("|---|---|---|")
    print(f"| cold compile (replica A) | {cold:.3f} | 1.00 |")
    print(f"| remote hit (replica B, from bazel-remote) | {remote_hit:.3f} | {remote_hit / cold:.3f} |")
    print(f"| local hit (replica B, its disk) | {local_hit:.3f} | {local_hit / cold:.3f} |")
    print(f"weights (not in these): the client uploads them to A in {upload_a:.3f} s; "
          f"B takes them from the shared tier in {upload_b:.3f} s")
    print(f"remote tier bytes: A wrote {written / 1e6:.2f} MB, B read {read / 1e6:.2f} MB")
    print(f"MLP b64 Execute, {args.clients} client threads, {args.seconds:.0f} s,"
          f" agents with --compute-threads {args.agent_threads}"
          f"{', OMP_WAIT_POLICY=' + args.omp_wait_policy if args.omp_wait_policy else ''}:"
          f" one replica {one:.0f} calls/s, two replicas {two:.0f} calls/s"
          f" ({two / one:.2f}x)")


if __name__ == "__main__":
    main()
