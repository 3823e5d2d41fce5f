"""The compile cache: across clients, processes, daemon restarts and weights."""

import json
import os
import shutil
import subprocess
import sys
import textwrap

import torch

import kiln
from kiln.testing import MLP, EncoderBlock, example_inputs
import support
from support import REPO

TOL = dict(rtol=1e-4, atol=1e-5)

# A model shape no other test uses, so the first compile in this file is ours.
SNIPPET = textwrap.dedent("""
    import json, sys, torch, kiln
    from kiln.testing import EncoderBlock, example_inputs
    torch.manual_seed(7)
    model = EncoderBlock(d_model=24, n_heads=3, d_ff=40).eval()
    inputs = example_inputs(model, 3)
    compiled = kiln.Client(sys.argv[1]).compile(torch.export.export(model, inputs))
    out = compiled(*inputs)
    ok = torch.allclose(out, model(*inputs), rtol=1e-4, atol=1e-5)
    print(json.dumps({"cache_hit": compiled.cache_hit, "digest": compiled.digest, "ok": ok}))
""")


def run_in_fresh_process(address):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "client_py"), env.get("PYTHONPATH", "")])
    proc = subprocess.run([sys.executable, "-c", SNIPPET, address], capture_output=True,
                          text=True, timeout=600, env=env)
    assert proc.returncode == 0, f"client process failed:\n{proc.stdout}\n{proc.stderr}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


def compile_snippet_model(client):
    torch.manual_seed(7)
    model = EncoderBlock(d_model=24, n_heads=3, d_ff=40).eval()
    inputs = example_inputs(model, 3)
    compiled = client.compile(torch.export.export(model, inputs))
    torch.testing.assert_close(compiled(*inputs), model(*inputs), **TOL)
    return compiled


def test_second_client_process_hits_cache(start_kilnd):
    daemon = start_kilnd()
    with kiln.Client(daemon.address) as client:
        first = compile_snippet_model(client)
    assert not first.cache_hit, "fresh cache dir, yet the first compile was a hit"
    result = run_in_fresh_process(daemon.address)
    assert result == {"cache_hit": True, "digest": first.digest, "ok": True}


def test_restarted_daemon_on_same_cache_dir_hits(start_kilnd, tmp_path):
    cache = tmp_path / "shared-cache"
    first_daemon = start_kilnd(cache, name="before-restart")
    with kiln.Client(first_daemon.address) as client:
        first = compile_snippet_model(client)
    assert not first.cache_hit
    first_daemon.assert_stops_cleanly()

    second_daemon = start_kilnd(cache, name="after-restart")
    with kiln.Client(second_daemon.address) as client:
        again = compile_snippet_model(client)
    assert again.cache_hit and again.digest == first.digest
    assert again.compile_key == first.compile_key
    result = run_in_fresh_process(second_daemon.address)
    assert result == {"cache_hit": True, "digest": first.digest, "ok": True}


def test_a_changed_compile_worker_is_a_new_compiler(start_kilnd, tmp_path):
    """The compiler's code lives in kiln-compile-worker, not in kilnd: a
    daemon on the same cache with the same kilnd but another worker binary
    has another compiler build id, and compiles the graph again instead of
    serving the old worker's executable."""
    worker = tmp_path / "kiln-compile-worker"
    shutil.copy2(support.build_dir() / "bin" / "kiln-compile-worker", worker)
    cache = tmp_path / "shared-cache"
    first_daemon = start_kilnd(cache, name="first-worker",
                               extra_args=[f"--compile-worker={worker}"])
    with kiln.Client(first_daemon.address) as client:
        first = compile_snippet_model(client)
        first_id = client.daemon_info().compiler_build_id
    first_daemon.assert_stops_cleanly()
    with open(worker, "ab") as f:
        f.write(b"\0")  # another build of the worker (an ELF runs with a byte appended)
    second_daemon = start_kilnd(cache, name="second-worker",
                                extra_args=[f"--compile-worker={worker}"])
    with kiln.Client(second_daemon.address) as client:
        again = compile_snippet_model(client)
        second_id = client.daemon_info().compiler_build_id
    assert second_id != first_id and second_id.startswith(f"kiln-{kiln.__version__}+")
    assert not again.cache_hit and again.compile_key != first.compile_key


def test_new_weights_reuse_executable(client):
    torch.manual_seed(11)
    a = MLP(d_in=20, d_hidden=36, d_out=12).eval()
    torch.manual_seed(12)
    b = MLP(d_in=20, d_hidden=36, d_out=12).eval()
    assert not torch.equal(a.fc1.weight, b.fc1.weight)
    x = example_inputs(a, 4)
    ca = client.compile(torch.export.export(a, x))
    cb = client.compile(torch.export.export(b, x))
    assert cb.cache_hit, "same architecture, different weights must hit the cache"
    assert cb.digest == ca.digest and cb.compile_key == ca.compile_key
    torch.testing.assert_close(cb(*x), b(*x), **TOL)
    torch.testing.assert_close(ca(*x), a(*x), **TOL)  # both weight sets stay usable
    assert not torch.allclose(a(*x), b(*x))


def test_backend_sees_weight_updates(kilnd):
    torch.manual_seed(13)
    model = MLP(d_in=12, d_hidden=20, d_out=6).eval()
    fast = torch.compile(model, backend=kiln.backend(kilnd.address))
    x = torch.randn(2, 12)
    torch.testing.assert_close(fast(x), model(x), **TOL)
    with torch.no_grad():
        model.fc2.weight.mul_(-0.5)
    torch.testing.assert_close(fast(x), model(x), **TOL)


def test_in_place_weight_changes_reach_the_next_call(client):
    """A call reuses the last request while its weight tensors are unchanged
    (no digesting of each weight per call); an in-place change is seen."""
    torch.manual_seed(14)
    model = MLP(d_in=12, d_hidden=20, d_out=6).eval()
    x = torch.randn(3, 12)
    compiled = client.compile(torch.export.export(model, (x,)))
    torch.testing.assert_close(compiled(x), model(x), **TOL)
    before = kiln.blobs.hash_count
    torch.testing.assert_close(compiled(x), model(x), **TOL)
    assert kiln.blobs.hash_count == before  # nothing digested again
    with torch.no_grad():
        for p in compiled._parameters.values():
            p.mul_(-0.5)
    with torch.no_grad():
        expected = torch.export.export(model, (x,)).module()(x)
    torch.testing.assert_close(compiled(x), expected, **TOL)
    assert kiln.blobs.hash_count > before
    # A new layout under the same object, version and address (a square
    # weight transposed through .data) is a new request too.
    square = next(p for p in compiled._parameters.values()
                  if p.dim() == 2 and p.shape[0] == p.shape[1])
    with torch.no_grad():
        square.data = square.data.t()
    with torch.no_grad():
        expected = torch.export.export(model, (x,)).module()(x)
    torch.testing.assert_close(compiled(x), expected, **TOL)
