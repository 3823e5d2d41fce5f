"""pytest entry point of the op registry: every case through a real kilnd for
each target in $KILN_REGISTRY_TARGETS (default: cpu,riscv64), strict against
tests/registry/xfail/<target>.txt; plus unit tests of the runner itself."""

from __future__ import annotations

import os
import pathlib
import sys

import pytest
import torch

REPO = pathlib.Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tests.registry import run  # noqa: E402
from tests.registry.registry import all_cases, tolerance_for  # noqa: E402

TARGETS = os.environ.get("KILN_REGISTRY_TARGETS", "cpu,riscv64").split(",")
JOBS = int(os.environ.get("KILN_REGISTRY_JOBS", "2"))


@pytest.fixture(scope="module")
def endpoint(tmp_path_factory):
    ep = run.OwnedKilnd(tmp_path_factory.mktemp("registry"), targets=TARGETS)
    yield ep
    ep.close()


@pytest.mark.parametrize("target", TARGETS)
def test_registry(endpoint, target, capsys):
    summary = run.run_registry(target, endpoint, jobs=JOBS)
    report = summary.report()
    with capsys.disabled():  # the counts belong in every log, passing or not
        print(f"\n{summary.line()} ({summary.seconds:.0f} s)")
    assert summary.ok, (f"unexpected results on {target} (update with python -m "
                        f"tests.registry.run --target {target} --update-xfail when "
                        f"intended):\n{report}")


# --- the runner itself --------------------------------------------------------


def test_registry_has_400_named_cases_over_every_dtype():
    cases = all_cases()
    assert len(cases) >= 400
    assert len({c.name for c in cases}) == len(cases)
    dtypes = set()
    for c in cases:
        _, inputs = c.build()
        dtypes |= {t.dtype for t in inputs}
    assert dtypes >= {torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int8,
                      torch.int16, torch.int32, torch.int64, torch.uint8, torch.bool}


def test_inputs_are_seeded_by_name():
    case = next(c for c in all_cases() if c.name == "add_f32")
    (_, a), (_, b) = case.build(), case.build()
    assert all(torch.equal(x, y) for x, y in zip(a, b))


def test_tolerances_exact_for_integers():
    assert tolerance_for(torch.int32, 1e-3, 1e-3) == (0.0, 0.0)
    assert tolerance_for(torch.bool, None, None) == (0.0, 0.0)
    assert tolerance_for(torch.float32, None, None) == (1e-4, 1e-5)


def test_compare_catches_values_dtypes_and_shapes():
    case = next(c for c in all_cases() if c.name == "add_f32")
    x = torch.ones(3)
    run.compare((x,), (x.clone(),), case)
    with pytest.raises(AssertionError, match="differs from eager"):
        run.compare(x + 1e-3, x, case)
    with pytest.raises(AssertionError, match="dtype"):
        run.compare(x.double(), x, case)
    with pytest.raises(AssertionError, match="shape"):
        run.compare(x[:2], x[:2].reshape(2, 1), case)
    with pytest.raises(AssertionError, match="outputs"):
        run.compare((x, x), (x,), case)
    i = torch.tensor([1, 2])
    with pytest.raises(AssertionError):
        run.compare(i + 1, i, case)


def test_local_agents_follow_the_targets():
    assert run.local_agent_args(["cpu"], []) == ()
    assert run.local_agent_args(["riscv64"], []) == ("--local-agents", "cpu,qemu")
    assert run.local_agent_args(["cpu", "riscv64"], []) == ("--local-agents", "cpu,qemu")
    assert run.local_agent_args(["riscv64"], ["--local-agents=qemu"]) == ()


def test_first_line_drops_request_ids_and_addresses():
    msg = ("[UNIMPLEMENTED] node 0: unsupported op 'aten.sort.default' (request abc123) "
           "(rpc=kiln.v1.Compiler/Compile, address=127.0.0.1:4242, target=cpu)\nmore")
    assert run.first_line(msg) == "[UNIMPLEMENTED] node 0: unsupported op 'aten.sort.default'"
    assert run.Result(all_cases()[0], error=msg).missing_op == "aten.sort.default"
    msg = ("[INVALID_ARGUMENT] loading executable sha256:" + "ab" * 32 + "/291: refused: "
           "/tmp/kiln-registry-3jo679pl/cache/x/" + "cd" * 32 + ": undefined symbol")
    assert run.first_line(msg) == ("[INVALID_ARGUMENT] loading executable <digest>: refused: "
                                   "<path>: undefined symbol")


def test_xfail_table_round_trip(tmp_path, monkeypatch):
    monkeypatch.setattr(run, "XFAIL_DIR", tmp_path)
    run.write_xfails("t", {"b_case": "[compile] why # with hash", "a_case": "x"})
    assert run.read_xfails("t") == {"a_case": "x", "b_case": "[compile] why # with hash"}
    assert run.read_xfails("missing") == {}


@pytest.mark.parametrize("target", TARGETS)
def test_strict_xpass_and_xfail(endpoint, tmp_path, monkeypatch, target):
    """A passing case listed as xfail is an XPASS; a failing one not listed is
    FAILED; a stale entry is reported; each makes the run not ok."""
    monkeypatch.setattr(run, "XFAIL_DIR", tmp_path)
    run.write_xfails(target, {"relu_f32": "pretend"})
    summary = run.run_registry(target, endpoint, ["relu_f3[2]"])
    assert [r.status for r in summary.results] == [run.XPASS]
    assert not summary.ok and "XPASS  relu_f32" in summary.report()

    run.write_xfails(target, {"no_such_case": "gone"})
    summary = run.run_registry(target, endpoint, ["relu_f3[2]"])
    assert summary.ok and summary.count(run.PASSED) == 1
    assert summary.line() == f"{target}: 1 cases, 1 passed, 0 xfail, 0 failed, 0 xpass"
    full = run.Summary(target, summary.results, ["no_such_case"], 0.0)
    assert not full.ok and "STALE  no_such_case" in full.report()

    # A wrong result: eager is perturbed, so the comparison must fail.
    prepared = run.prepare(next(c for c in all_cases() if c.name == "relu_f32"))
    prepared.expected = prepared.expected + 0.5
    result = run.execute(prepared, endpoint, target)
    assert result.phase == "compare" and "differs from eager" in result.error
