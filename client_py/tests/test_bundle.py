"""kiln.bundle without a daemon: the harness's output format round-trips."""

import pytest
import torch

from kiln import bundle


def _print_like_the_harness(tensors):
    """The text the generated harness prints for ``tensors``."""
    lines = []
    for i, t in enumerate(tensors):
        size = t.element_size()
        raw = t.contiguous().reshape(-1).view({1: torch.uint8, 2: torch.int16,
                                               4: torch.int32, 8: torch.int64}[size])
        words = [f"{int(v) & ((1 << 8 * size) - 1):0{2 * size}x}" for v in raw]
        lines.append(f"kiln-output {i} x {'x'.join(map(str, t.shape))}")
        lines += [" ".join(words[j:j + 8]) for j in range(0, len(words), 8)]
    lines.append("kiln-done")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16,
                                   torch.int64, torch.int32, torch.int8, torch.uint8,
                                   torch.bool])
def test_outputs_round_trip_bit_exactly(dtype):
    torch.manual_seed(0)
    t = (torch.randn(3, 5) * 100).to(dtype)
    if dtype.is_floating_point:
        t[0, 0] = -0.0
        t[0, 1] = float("-inf")
    (back,) = bundle.parse_outputs(_print_like_the_harness([t]), [(dtype, [3, 5])])
    assert back.dtype == dtype and back.shape == t.shape
    assert torch.equal(back.view(torch.uint8), t.view(torch.uint8))


def test_several_outputs_and_semihosting_noise():
    a, b = torch.arange(10, dtype=torch.float32), torch.tensor([[True, False]])
    text = "booting\n" + _print_like_the_harness([a, b])
    out = bundle.parse_outputs(text, [(torch.float32, [10]), (torch.bool, [1, 2])])
    assert torch.equal(out[0], a) and torch.equal(out[1], b)


def test_a_run_that_stops_early_is_an_error():
    text = _print_like_the_harness([torch.ones(4)]).replace("kiln-done\n", "")
    with pytest.raises(bundle.BundleError, match="stopped early"):
        bundle.parse_outputs(text, [(torch.float32, [4])])
    with pytest.raises(bundle.BundleError, match="printed 1 output"):
        bundle.parse_outputs(_print_like_the_harness([torch.ones(4)]),
                             [(torch.float32, [4]), (torch.float32, [4])])


def test_bundle_names_must_be_c_identifiers():
    with pytest.raises(ValueError, match="C identifier"):
        bundle.write_bundle(None, None, (), "/tmp/never", name="my-model")


def test_bare_metal_options():
    assert bundle.bare_metal_options() == {"riscv": {"bare_metal": True, "vlen": 128}}
    assert bundle.bare_metal_options(vector=False) == {
        "riscv": {"bare_metal": True, "scalar_only": True}}


def test_codegen_reads_riscv_options_from_a_dict_or_a_message():
    from kiln.backend import _riscv_options
    from kiln.v1 import compiler_pb2

    assert _riscv_options(None).scalar_only is False
    assert _riscv_options({"riscv": {"scalar_only": True}}).scalar_only is True
    message = compiler_pb2.CompileOptions(riscv=compiler_pb2.RiscvOptions(vlen=256))
    assert _riscv_options(message).vlen == 256
