"""pytest entry point of the op registry: every case through a real kilnd for
each target in $KILN_REGISTRY_TARGETS (default: cpu,riscv64), strict against
tests/registry/xfail/<target>.txt; then the OpInfo family's selection
$KILN_REGISTRY_OPINFO (sample, full or none; default sample) for each target,
strict against tests/registry/xfail/opinfo-<target>.txt; plus unit tests of
the runner itself and of the OpInfo family (no daemon)."""

from __future__ import annotations

import dataclasses
import os
import pathlib
import sys

import pytest
import torch
from torch.utils import _pytree as pytree

REPO = pathlib.Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tests.registry import run  # noqa: E402
from tests.registry.registry import (IndexTies, SignFree, Unordered, all_cases,  # noqa: E402
                                     tolerance_for)

TARGETS = os.environ.get("KILN_REGISTRY_TARGETS", "cpu,riscv64").split(",")
JOBS = int(os.environ.get("KILN_REGISTRY_JOBS", "2"))
OPINFO = os.environ.get("KILN_REGISTRY_OPINFO", "sample")


@pytest.fixture(scope="module")
def endpoint(tmp_path_factory):
    ep = run.OwnedKilnd(tmp_path_factory.mktemp("registry"), targets=TARGETS)
    yield ep
    ep.close()


@pytest.fixture(scope="module")
def registry_summaries(endpoint):
    """Every target's run of the registry: each case is exported once and run
    on every target (the export is most of a run's time)."""
    return run.run_targets(TARGETS, endpoint, jobs=JOBS)


@pytest.fixture(scope="module")
def opinfo_summaries(endpoint):
    return run.run_targets(TARGETS, endpoint, jobs=JOBS, suite=run.opinfo_suite(OPINFO))


def _check(summary: run.Summary, capsys, update: str) -> None:
    report = summary.report()
    with capsys.disabled():  # the counts belong in every log, passing or not
        print(f"\n{summary.line()} ({'+'.join(TARGETS)} together: {summary.seconds:.0f} s)")
    assert summary.ok, (f"unexpected results on {summary.target} (update with python -m "
                        f"tests.registry.run --target {summary.target}{update} "
                        f"--update-xfail when intended):\n{report}")


@pytest.mark.parametrize("target", TARGETS)
def test_registry(registry_summaries, target, capsys):
    _check(registry_summaries[target], capsys, "")


@pytest.mark.skipif(OPINFO == "none", reason="KILN_REGISTRY_OPINFO=none")
@pytest.mark.parametrize("target", TARGETS)
def test_opinfo(opinfo_summaries, target, capsys):
    """The OpInfo family (tests/registry/opinfo.py), strict against its table."""
    _check(opinfo_summaries[target], capsys, f" --opinfo {OPINFO}")


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


def test_tied_indices_compare_by_what_they_pick():
    case = dataclasses.replace(next(c for c in all_cases() if c.name == "add_f32"),
                               index_ties=IndexTies(output=1, input=0, dim=1))
    x = torch.tensor([[3, 1, 3, 2], [5, 5, 5, 0]])
    eager = ((torch.tensor([[3, 3], [5, 5]]), torch.tensor([[0, 2], [1, 2]])), (x,))

    def kiln(indices):
        return ((eager[0][0], torch.tensor(indices)), (x,))
    run.compare(kiln([[2, 0], [0, 2]]), eager, case)        # ties in another order
    with pytest.raises(AssertionError, match="picks other values"):
        run.compare(kiln([[0, 3], [0, 1]]), eager, case)
    with pytest.raises(AssertionError, match="names an index twice"):
        run.compare(kiln([[0, 0], [1, 1]]), eager, case)
    with pytest.raises(AssertionError, match="outside"):
        run.compare(kiln([[0, 4], [1, 2]]), eager, case)
    with pytest.raises(AssertionError, match="differs from eager"):  # values still exact
        run.compare(((eager[0][0] + 1, eager[0][1]), (x,)), eager, case)


def test_unordered_values_compare_as_matched_sets():
    case = dataclasses.replace(next(c for c in all_cases() if c.name == "add_f32"),
                               unordered=(Unordered(0),))
    want = torch.tensor([[1 + 2j, 1 - 2j, 3 + 0j], [5 + 0j, -1 + 0j, float("nan")]])
    # Any order of the same values passes (rows matched independently).
    run.compare((want[:, [2, 0, 1]],), (want,), case)
    run.compare((torch.stack([want[0, [1, 0, 2]], want[1, [2, 1, 0]]]),), (want,), case)
    # A wrong value, a missing pair member, or a value taken twice fails.
    wrong = want.clone()
    wrong[0, 2] = 3.1
    with pytest.raises(AssertionError, match="output 0"):
        run.compare((wrong,), (want,), case)
    twice = want.clone()
    twice[0, 1] = 1 + 2j
    with pytest.raises(AssertionError, match="output 0"):
        run.compare((twice,), (want,), case)
    # Without Unordered, the permutation itself fails.
    plain = dataclasses.replace(case, unordered=())
    with pytest.raises(AssertionError, match="output 0"):
        run.compare((want[:, [2, 0, 1]],), (want,), plain)


def test_sign_free_complex_vectors_compare_up_to_each_vectors_phase():
    case = dataclasses.replace(next(c for c in all_cases() if c.name == "add_f32"),
                               sign_free=(SignFree(0),))
    v = torch.tensor([[0.6 + 0.0j, 0.0 + 0.8j], [0.0 + 0.8j, 0.6 + 0.0j]])
    turned = v * torch.tensor([1j, (0.6 - 0.8j)])  # each column times a unit complex
    run.compare((turned,), (v,), case)
    with pytest.raises(AssertionError, match="output 0 .* differs from eager"):
        run.compare((turned * torch.tensor([1.0, 2.0]),), (v,), case)  # not only a phase
    with pytest.raises(AssertionError, match="output 0 .* differs from eager"):
        run.compare((v.conj(),), (v,), case)  # conjugated vectors are other vectors


def test_sign_free_vectors_compare_up_to_each_vectors_sign():
    case = dataclasses.replace(next(c for c in all_cases() if c.name == "add_f32"),
                               sign_free=(SignFree(1), SignFree(2, dim=-1)))
    w = torch.tensor([1.0, 2.0])
    v = torch.tensor([[0.6, -0.8], [0.8, 0.6]])
    run.compare((w, v * torch.tensor([-1.0, 1.0]), v.mT * torch.tensor([[1.0], [-1.0]])),
                (w, v, v.mT), case)                 # one column / row flipped each
    with pytest.raises(AssertionError, match="output 1 .* differs from eager"):
        run.compare((w, v[:, [1, 0]], v.mT), (w, v, v.mT), case)  # other vectors
    with pytest.raises(AssertionError, match="output 2 .* differs from eager"):
        run.compare((w, v, v), (w, v, v.mT), case)  # columns, where rows are the vectors
    with pytest.raises(AssertionError, match="output 0 .* differs from eager"):
        run.compare((-w, v, v.mT), (w, v, v.mT), case)  # only vectors are sign-free


def test_complete_svds_compare_by_the_projector_onto_the_complement():
    from tests.registry import opinfo
    g = torch.Generator().manual_seed(0)
    a = torch.randn(5, 3, dtype=torch.complex128, generator=g)
    u, s, vh = torch.linalg.svd(a, full_matrices=True)
    turn = torch.linalg.qr(torch.randn(2, 2, dtype=torch.complex128, generator=g)).Q
    other = torch.cat([u[:, :3], u[:, 3:] @ turn], -1)  # another basis of the complement
    assert not torch.allclose(other, u)
    mine = opinfo._complete_svd_parts(other, s, vh, v_rows=True)
    eager = opinfo._complete_svd_parts(u, s, vh, v_rows=True)
    assert len(mine) == 5
    for x, y in zip(mine, eager):
        torch.testing.assert_close(x, y)
    # A basis that misses part of the complement is caught.
    wrong = torch.cat([u[:, :3], u[:, 3:4], u[:, 3:4]], -1)
    assert not torch.allclose(opinfo._complete_svd_parts(wrong, s, vh, v_rows=True)[3], eager[3])
    # Reduced (or square) decompositions are left as they are.
    reduced = torch.linalg.svd(a, full_matrices=False)
    assert len(opinfo._complete_svd_parts(*reduced, v_rows=True)) == 3
    # torch.svd's V (columns), of a wide matrix: V's columns past k.
    uw, sw, vw = torch.svd(a.mT, some=False)
    parts = opinfo._complete_svd_parts(uw, sw, vw, v_rows=False)
    assert [tuple(t.shape) for t in parts] == [(3, 3), (3,), (5, 3), (3, 3), (5, 5)]
    torch.testing.assert_close(parts[4], vw[:, 3:] @ vw[:, 3:].mH)


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
    outputs, inputs = prepared.expected  # (outputs, the inputs as eager left them)
    prepared.expected = (outputs + 0.5, inputs)
    result = run.execute(prepared, endpoint, target)
    assert result.phase == "compare" and "differs from eager" in result.error


def test_summary_line_of_a_family_with_skips():
    suite = run.Suite("opinfo", list, set, whole=False, noun="samples")
    results = [run.Result(all_cases()[0], status=run.PASSED),
               run.Result(all_cases()[1], status=run.XFAIL, error="x")]
    summary = run.Summary("cpu", results, [], 0.0, suite, {"eager rejects the sample": 2,
                                                          "other dtypes": 7})
    assert summary.line() == ("opinfo cpu: 2 samples, 1 passed, 1 xfail, 0 failed, 0 xpass; "
                              "skipped 7 (other dtypes); skipped 2 (eager rejects the "
                              "sample)")
    assert summary.table == "opinfo-cpu"


def test_failures_group_without_node_names_and_shapes():
    case = all_cases()[0]
    zero = ("[UNIMPLEMENTED] target 'cpu' cannot compile 1 of 1 nodes: node 0 '{}' (aten.{}"
            ".default): input 'a0' has shape [{}]: tensors with a zero-sized dimension are "
            "not supported yet. To run them on the host CPU instead, compile with ...")
    a = run.Result(case, phase="compile", error=zero.format("cos", "cos", "1, 0, 3"))
    b = run.Result(case, phase="compile", error=zero.format("exp_1", "exp", "0"))
    assert a.group == b.group == ("compile: [UNIMPLEMENTED] target 'cpu' cannot compile: an "
                                  "input has shape [..]: tensors with a zero-sized dimension "
                                  "are not supported yet")
    c = run.Result(case, phase="compare", error="AssertionError: output 0 (torch.float16) "
                   "differs from eager at rtol=0.002 atol=0.001: Mismatched elements: 3 / 9")
    assert c.group.endswith("differs from eager at rtol=0.002 atol=0.001")
    d = run.Result(case, phase="compile", error="[UNIMPLEMENTED] node 2 'x' (aten.x.default): "
                   "unsupported op 'aten.x.default' (Kiln supports 239 ATen ops; see docs)")
    assert d.group == "aten.x.default"


def test_family_table_is_separate_and_a_sample_update_keeps_other_entries(tmp_path,
                                                                          monkeypatch):
    monkeypatch.setattr(run, "XFAIL_DIR", tmp_path)
    a, b = all_cases()[:2]
    suite = run.Suite("opinfo", lambda: [a, b], lambda: {a.name, b.name, "other"},
                      whole=False, noun="samples")
    run.write_xfails("cpu", {"other": "kept", "gone": "stale"}, suite)
    assert (tmp_path / "opinfo-cpu.txt").exists() and not (tmp_path / "cpu.txt").exists()
    assert "--opinfo sample --update-xfail" in (tmp_path / "opinfo-cpu.txt").read_text()
    results = [run.Result(a, status=run.PASSED), run.Result(b, phase="compile", error="no")]
    table = run.update_xfails(run.Summary("cpu", results, [], 0.0, suite), partial=False)
    assert table == {"other": "kept", b.name: "[compile] no"}
    whole = dataclasses.replace(suite, whole=True)
    assert run.update_xfails(run.Summary("cpu", results, [], 0.0, whole), partial=False) \
        == {b.name: "[compile] no"}


# --- the OpInfo family (tests/registry/opinfo.py), no daemon -----------------------

@pytest.fixture(scope="module")
def opinfo():
    pytest.importorskip("expecttest")  # op_db's import needs it (requirements.txt)
    from tests.registry import opinfo as module
    return module


def test_opinfo_selects_core_aten_ops(opinfo):
    names = {op.name for op in opinfo.selected_opinfos()}
    assert {"add", "div", "sum", "nn.functional.relu", "nn.functional.pad", "sort",
            "native_layer_norm", "scatter_reduce"} <= names
    assert not names & {"nn.functional.silu", "linalg.solve", "__radd__", "float"}
    assert {"nn.functional.pad", "nn.functional.relu"} <= names  # constant_pad_nd, relu
    for op in opinfo.selected_opinfos():
        assert opinfo.is_core(opinfo.aten_name(op)), op.name


def test_opinfo_selection_is_deterministic_and_named_uniquely(opinfo):
    enum = opinfo.enumerate_opinfo()
    names = [c.name for c in enum.candidates]
    assert len(names) == len(set(names)) > 10000
    sample = opinfo.opinfo_cases("sample")
    assert len({c.name for c in sample}) == len(sample)
    assert {c.name for c in sample} <= enum.names
    # Every OpInfo (variant) and every dtype is in the sample.
    assert len(sample) == opinfo.SAMPLE_SIZE
    assert {c.name.rsplit(".", 2)[0] for c in sample} == \
        {c.name.rsplit(".", 2)[0] for c in enum.candidates}
    assert {c.name.rsplit(".", 2)[1] for c in sample} == \
        {opinfo.DTYPE_NAMES[d] for d in opinfo.DTYPES}  # the family's dtypes
    # The same samples again, from a fresh generator run with the same seed.
    for case in sample[::97]:
        op_label, dt, index = case.name[len("opinfo."):].rsplit(".", 2)
        op = next(o for o in opinfo.selected_opinfos()
                  if opinfo._op_label(o) == op_label)
        dtype = next(d for d, n in opinfo.DTYPE_NAMES.items() if n == dt)
        again = opinfo._samples(op, dtype)[int(index)]
        _, inputs = case.build()
        _, _, _, tensors = opinfo._split(again)
        assert len(inputs) == len(tensors)
        assert all(torch.equal(a, b) for a, b in zip(inputs, tensors)), case.name
    # Complex dtypes are the family's; uint16 and the like are skipped.
    assert {"c64", "c128"} <= {c.name.rsplit(".", 2)[1] for c in sample}
    skipped = opinfo.select("sample").skipped
    assert skipped.get("other dtypes ((op, dtype) pairs)", 0) > 0


def test_opinfo_case_matches_op(opinfo):
    """A case's module is the OpInfo's op on the sample, tensors from its inputs."""
    candidates = {c.name: c for c in opinfo.enumerate_opinfo().candidates}
    for name in ("opinfo.add.f32.0", "opinfo.div.floor_rounding.f64.1",
                 "opinfo.nn.functional.pad.constant.f32.2", "opinfo.sort.i32.3",
                 "opinfo.cat.f16.0", "opinfo.max.reduction_with_dim.bf16.1"):
        case, why = candidates[name].check()
        assert case is not None, why
        op_label, dt, index = name[len("opinfo."):].rsplit(".", 2)
        op = next(o for o in opinfo.selected_opinfos() if opinfo._op_label(o) == op_label)
        dtype = next(d for d, n in opinfo.DTYPE_NAMES.items() if n == dt)
        sample = opinfo._samples(op, dtype)[int(index)]
        module, inputs = case.build()
        with torch.no_grad():
            got = module(*inputs)
            want = op.op(sample.input, *sample.args, **sample.kwargs)
        for g, w in zip(pytree.tree_leaves(got), pytree.tree_leaves(want)):
            torch.testing.assert_close(g, w, rtol=0, atol=0, equal_nan=True)
