"""compiler/runtime/kiln_rt_half.c, the half/bfloat16 conversions linked into
every riscv64 artifact, built for the host and checked bit for bit: every half
value, and a million floats and doubles (normal, subnormal, overflowing, ties,
NaN and infinity). References: PyTorch for float sources; NumPy for double
to half, because the routine rounds once, as LLVM's fptrunc means, while
PyTorch's CPU cast rounds twice (through float)."""

from __future__ import annotations

import ctypes
import pathlib
import shutil
import subprocess

import numpy as np
import pytest
import torch

REPO = pathlib.Path(__file__).resolve().parents[2]
SOURCE = REPO / "compiler" / "runtime" / "kiln_rt_half.c"


@pytest.fixture(scope="module")
def rt(tmp_path_factory):
    clang = shutil.which("clang-19")
    assert clang, "clang-19 comes with scripts/install_deps.sh"
    lib = tmp_path_factory.mktemp("rt") / "librt.so"
    subprocess.run([clang, "-O2", "-shared", "-fPIC", "-DKILN_RT_TEST", "-o", str(lib),
                    str(SOURCE)], check=True)
    rt = ctypes.CDLL(str(lib))
    for name, arg, res in [("kiln_rt_test_f32_to_f16", ctypes.c_float, ctypes.c_uint16),
                           ("kiln_rt_test_f64_to_f16", ctypes.c_double, ctypes.c_uint16),
                           ("kiln_rt_test_f32_to_bf16", ctypes.c_float, ctypes.c_uint16),
                           ("kiln_rt_test_f16_to_f32", ctypes.c_uint16, ctypes.c_float)]:
        fn = getattr(rt, name)
        fn.argtypes, fn.restype = [arg], res
    return rt


def _samples(dtype) -> torch.Tensor:
    g = torch.Generator().manual_seed(0)
    parts = [torch.randn(200_000, generator=g, dtype=torch.float64) * s
             for s in (1e-8, 1e-5, 1e-3, 1, 1e3, 6e4, 1e39)]
    # Exact ties and near-ties between neighbouring half/bf16 values.
    halves = torch.arange(0, 1 << 15, dtype=torch.int32).to(torch.int16).view(torch.float16)
    mids = (halves[:-1].double() + halves[1:].double()) / 2
    parts += [mids, mids.nextafter(torch.tensor(0.0, dtype=torch.float64)),
              torch.tensor([0.0, -0.0, float("inf"), float("-inf"), 65504.0, 65520.0,
                            2.0 ** -25, 2.0 ** -24, 3 * 2.0 ** -26], dtype=torch.float64)]
    values = torch.cat(parts).to(dtype)
    return values[torch.isfinite(values) | torch.isinf(values)]


def _bits(t: torch.Tensor) -> np.ndarray:
    return t.view(torch.int16).numpy().astype(np.uint16)


@pytest.mark.parametrize("source", [torch.float32, torch.float64])
def test_narrowing_to_half_matches_pytorch(rt, source):
    fn = rt.kiln_rt_test_f32_to_f16 if source == torch.float32 else rt.kiln_rt_test_f64_to_f16
    x = _samples(source)
    if source == torch.float32:
        expected = _bits(x.to(torch.float16))
    else:
        expected = x.numpy().astype(np.float16).view(np.uint16)
    got = np.fromiter((fn(v) for v in x.tolist()), dtype=np.uint16, count=len(x))
    bad = np.nonzero(got != expected)[0]
    assert bad.size == 0, [(x[i].item(), hex(got[i]), hex(expected[i])) for i in bad[:5]]


def test_narrowing_to_bfloat16_matches_pytorch(rt):
    x = _samples(torch.float32)
    expected = _bits(x.to(torch.bfloat16))
    got = np.fromiter((rt.kiln_rt_test_f32_to_bf16(v) for v in x.tolist()), dtype=np.uint16,
                      count=len(x))
    bad = np.nonzero(got != expected)[0]
    assert bad.size == 0, [(x[i].item(), hex(got[i]), hex(expected[i])) for i in bad[:5]]


def test_nan_stays_nan(rt):
    assert (rt.kiln_rt_test_f32_to_f16(float("nan")) & 0x7fff) > 0x7c00
    assert (rt.kiln_rt_test_f32_to_bf16(float("nan")) & 0x7fff) > 0x7f80
    assert np.isnan(rt.kiln_rt_test_f16_to_f32(0x7e00))


def test_widening_every_half_is_exact(rt):
    halves = torch.arange(0, 1 << 16, dtype=torch.int32).to(torch.int16).view(torch.float16)
    expected = halves.float()
    got = torch.tensor([rt.kiln_rt_test_f16_to_f32(h) for h in range(1 << 16)])
    same = (got.view(torch.int32) == expected.view(torch.int32)) | (got.isnan() & expected.isnan())
    assert bool(same.all()), torch.nonzero(~same)[:5].flatten().tolist()
