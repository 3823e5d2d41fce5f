"""kiln.bundle: a compiled model as a bare-metal RISC-V program you can build.

    bundle = kiln.bundle.write_bundle(client, exported, (x,), "out/", name="mlp")
    bundle.build()           # make: riscv64-unknown-elf-gcc + picolibc
    outputs = bundle.run()   # qemu-system-riscv64 -machine virt -bios none

The daemon compiles the graph for ``riscv64`` with ``bare_metal`` set: a
relocatable object (medany, lp64d) whose ``kiln_invoke(void **buffers)`` takes
parameters, inputs and outputs in manifest order. Around it the bundle holds:

=====================  ======================================================
``{name}_model.o``     the compiled model (from the daemon)
``{name}.h``           its signature: buffer counts, names, types and sizes
``{name}.c``           a harness: example inputs, one call, outputs printed
``{name}_weights.bin`` the parameters, each 64-byte aligned, little-endian
``{name}_weights.c``   places the .bin in .rodata (``.incbin``) with offsets
``{name}_inputs.bin``  the example inputs the harness runs, same layout
``{name}.ld``          the memory map of QEMU's ``virt`` board (RAM at
                       0x80000000) on top of picolibc's linker script
``Makefile``           ``make`` builds ``{name}.elf``; ``make run`` runs it
=====================  ======================================================

The harness prints each output over semihosting as ``kiln-output I DTYPE
SHAPE`` followed by the elements' bit patterns in hex (exact, no float
formatting), then ``kiln-done``; :meth:`Bundle.run` parses that back into
tensors.
"""

from __future__ import annotations

import dataclasses
import pathlib
import re
import shutil
import subprocess
from typing import Any, Sequence

import torch

from kiln.errors import KilnError
from kiln.tensors import PROTO_TO_DTYPE, tensor_bytes
from kiln.v1 import executable_pb2, tensor_pb2

__all__ = ["Bundle", "BundleError", "bare_metal_options", "parse_outputs", "write_bundle",
           "write_compiled_bundle"]

ALIGNMENT = 64
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_DTYPE_NAMES = {
    tensor_pb2.DTYPE_F32: "f32", tensor_pb2.DTYPE_F64: "f64", tensor_pb2.DTYPE_F16: "f16",
    tensor_pb2.DTYPE_BF16: "bf16", tensor_pb2.DTYPE_I8: "i8", tensor_pb2.DTYPE_I16: "i16",
    tensor_pb2.DTYPE_I32: "i32", tensor_pb2.DTYPE_I64: "i64", tensor_pb2.DTYPE_U8: "u8",
    tensor_pb2.DTYPE_BOOL: "bool", tensor_pb2.DTYPE_C64: "c64", tensor_pb2.DTYPE_C128: "c128",
}
_BITS_DTYPE = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


class BundleError(KilnError):
    """Building or running a bundle failed (the message carries the tool's output)."""


@dataclasses.dataclass
class Bundle:
    """A written bundle: its folder, name and the outputs' types."""

    directory: pathlib.Path
    name: str
    output_types: list[tuple[torch.dtype, list[int]]]
    vector: bool
    vlen: int

    @property
    def elf(self) -> pathlib.Path:
        return self.directory / f"{self.name}.elf"

    def build(self, make: str = "make") -> pathlib.Path:
        """Runs ``make`` in the bundle folder; returns the ELF image."""
        done = subprocess.run([make, "-C", str(self.directory)], capture_output=True, text=True)
        if done.returncode != 0:
            raise BundleError(f"building bundle {self.name!r} failed:\n{done.stdout}{done.stderr}")
        return self.elf

    def run(self, timeout: float = 120.0) -> list[torch.Tensor]:
        """Runs the built image under qemu-system-riscv64 (``make run``) and
        returns the outputs it printed, as tensors."""
        try:
            done = subprocess.run(["make", "-s", "-C", str(self.directory), "run"],
                                  capture_output=True, text=True, timeout=timeout,
                                  stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired as e:
            raise BundleError(f"bundle {self.name!r} did not finish within {timeout} s "
                              f"under qemu-system-riscv64") from e
        if done.returncode != 0:
            raise BundleError(f"bundle {self.name!r} exited with {done.returncode} under "
                              f"qemu-system-riscv64:\n{done.stdout}{done.stderr}")
        # qemu writes the guest's semihosting console to its stderr.
        return parse_outputs(done.stdout + done.stderr, self.output_types)


def parse_outputs(text: str, types: Sequence[tuple[torch.dtype, Sequence[int]]]
                  ) -> list[torch.Tensor]:
    """Tensors from the harness's ``kiln-output`` blocks (hex bit patterns)."""
    outputs: list[torch.Tensor] = []
    words: list[str] | None = None
    blocks: list[list[str]] = []
    for line in text.splitlines():
        if line.startswith("kiln-output "):
            words = []
            blocks.append(words)
        elif line.strip() == "kiln-done":
            words = None
        elif words is not None:
            words.extend(line.split())
    if "kiln-done" not in text or len(blocks) != len(types):
        raise BundleError(f"the bundle printed {len(blocks)} output(s) of {len(types)} "
                          f"(or stopped early):\n{text[-2000:]}")
    for (dtype, shape), block in zip(types, blocks):
        # A complex output prints as its (real, imaginary) parts.
        part = _part_dtype(dtype)
        size = torch.empty((), dtype=part).element_size()
        values = [int(w, 16) for w in block]
        # Bit patterns as unsigned ints; reinterpret through a same-width int.
        signed = [v - (1 << (8 * size)) if v >= 1 << (8 * size - 1) and size > 1 else v
                  for v in values]
        raw = torch.tensor(signed, dtype=_BITS_DTYPE[size]).view(part)
        if dtype.is_complex:
            outputs.append(torch.view_as_complex(raw.reshape(list(shape) + [2])).clone())
        else:
            outputs.append(raw.reshape(list(shape)).clone())
    return outputs


def _part_dtype(dtype: torch.dtype) -> torch.dtype:
    """The type a bundle prints an element of ``dtype`` in: a complex
    number's parts, else the type itself."""
    return {torch.complex64: torch.float32, torch.complex128: torch.float64}.get(dtype, dtype)


def _pack(tensors: Sequence[torch.Tensor]) -> tuple[bytes, list[int]]:
    blob, offsets = bytearray(), []
    for t in tensors:
        offsets.append(len(blob))
        blob += tensor_bytes(t)
        blob += b"\0" * (-len(blob) % ALIGNMENT)
    return bytes(blob), offsets


def _c_type_comment(arg: executable_pb2.ManifestArgument) -> str:
    shape = ", ".join(str(d) for d in arg.type.shape)
    return f"{_DTYPE_NAMES.get(arg.type.dtype, '?')}[{shape}]"


def _nbytes(arg: executable_pb2.ManifestArgument) -> int:
    dtype = PROTO_TO_DTYPE[arg.type.dtype]
    n = 1
    for d in arg.type.shape:
        n *= d
    return n * torch.empty((), dtype=dtype).element_size()


def write_bundle(client: Any, model: Any, example_inputs: Sequence[torch.Tensor],
                 directory: str | pathlib.Path, name: str = "model", *,
                 vector: bool = True, vlen: int = 128) -> Bundle:
    """Compiles ``model`` (an ExportedProgram or core-ATen GraphModule, as
    :meth:`kiln.Client.compile` takes) for bare-metal riscv64 and writes the
    bundle into ``directory``. ``vector`` selects rv64gcv (VLEN ``vlen``)
    code, else rv64gc."""
    if not _NAME.match(name):
        raise ValueError(f"bundle name {name!r} must be a C identifier")
    compiled = client.compile(model, target="riscv64", options=bare_metal_options(vector, vlen),
                              name=name)
    flat = list(example_inputs)
    ordered = ([flat[i] for i in compiled.input_order]
               if len(flat) == len(compiled.input_order) else flat)
    return write_compiled_bundle(client, compiled, ordered, directory, name,
                                 vector=vector, vlen=vlen)


def bare_metal_options(vector: bool = True, vlen: int = 128) -> dict[str, Any]:
    """CompileOptions (as a dict) for a bare-metal riscv64 object."""
    riscv: dict[str, Any] = {"bare_metal": True}
    if vector:
        riscv["vlen"] = vlen
    else:
        riscv["scalar_only"] = True
    return {"riscv": riscv}


def write_compiled_bundle(client: Any, compiled: Any, inputs: Sequence[torch.Tensor],
                          directory: str | pathlib.Path, name: str, *,
                          vector: bool = True, vlen: int = 128) -> Bundle:
    """Writes the bundle of an executable compiled with
    :func:`bare_metal_options`; ``inputs`` are in the manifest's order (less
    the seed of a graph with random ops, drawn here, kiln.rng)."""
    if not _NAME.match(name):
        raise ValueError(f"bundle name {name!r} must be a C identifier")
    record = executable_pb2.ExecutableRecord()
    record.ParseFromString(client.blobs.read(compiled.executable))
    manifest = record.manifest
    if manifest.format != "elf-relocatable-object":
        raise BundleError(f"the daemon returned a {manifest.format!r} artifact, not a "
                          "bare-metal object")
    obj = client.blobs.read(record.artifact)
    params = [compiled.parameters[a.name] for a in manifest.parameters]
    if len(inputs) != len(compiled.call_inputs):
        raise ValueError(f"the model takes {len(compiled.call_inputs)} input(s), "
                         f"got {len(inputs)} example input(s)")
    inputs = compiled.with_seed(inputs)  # the bundle runs one call's draw
    weights, weight_offsets = _pack(params)
    packed_inputs, input_offsets = _pack(inputs)

    out = pathlib.Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}_model.o").write_bytes(obj)
    (out / f"{name}_weights.bin").write_bytes(weights)
    (out / f"{name}_inputs.bin").write_bytes(packed_inputs)
    (out / f"{name}.h").write_text(_header(name, compiled.digest, manifest))
    (out / f"{name}_weights.c").write_text(
        _blob_source(name, "weights", weight_offsets))
    (out / f"{name}.c").write_text(_harness(name, manifest, input_offsets))
    (out / f"{name}.ld").write_text(_linker_script(len(weights) + len(packed_inputs)))
    (out / "Makefile").write_text(_makefile(name, vector, vlen))
    types = [(PROTO_TO_DTYPE[a.type.dtype], list(a.type.shape)) for a in manifest.outputs]
    return Bundle(out, name, types, vector, vlen)


def _header(name: str, digest: str, m: executable_pb2.ExecutableManifest) -> str:
    up = name.upper()
    lines = [
        f"/* {name}.h: signature of a Kiln bare-metal bundle. Generated; do not edit.",
        f" * executable sha256:{digest}",
        f" * target {m.target} ({m.triple}, {m.cpu}, {m.features})",
        " */",
        f"#ifndef KILN_BUNDLE_{up}_H",
        f"#define KILN_BUNDLE_{up}_H",
        "",
        "#include <stddef.h>",
        "#include <stdint.h>",
        "",
        f"#define {up}_NUM_PARAMETERS {len(m.parameters)}",
        f"#define {up}_NUM_INPUTS {len(m.inputs)}",
        f"#define {up}_NUM_OUTPUTS {len(m.outputs)}",
        "",
    ]
    for kind, args in (("PARAMETER", m.parameters), ("INPUT", m.inputs),
                       ("OUTPUT", m.outputs)):
        for i, a in enumerate(args):
            lines.append(f"/* {kind.lower()} {i} '{a.name}': {_c_type_comment(a)} */")
            lines.append(f"#define {up}_{kind}{i}_BYTES {_nbytes(a)}u")
    lines += [
        "",
        f"/* The compiled model ({name}_model.o): buffers are the parameters,",
        " * then the inputs, then the outputs, each dense, row-major and",
        " * 64-byte aligned. */",
        "void kiln_invoke(void **buffers);",
        "",
        f"/* {name}_weights.c: the parameters and where each starts. */",
        f"extern const unsigned char {name}_weights[];",
        f"extern const size_t {name}_weights_offsets[];",
        "",
        f"#endif /* KILN_BUNDLE_{up}_H */",
        "",
    ]
    return "\n".join(lines)


def _incbin(symbol: str, path: str) -> str:
    return (f'__asm__(".section .rodata.{symbol},\\"a\\",@progbits\\n"\n'
            f'        ".balign {ALIGNMENT}\\n"\n'
            f'        ".global {symbol}\\n"\n'
            f'        "{symbol}:\\n"\n'
            f'        ".incbin \\"{path}\\"\\n"\n'
            f'        ".previous\\n");\n')


def _offsets(symbol: str, offsets: Sequence[int]) -> str:
    values = ", ".join(str(o) for o in offsets) or "0"
    return f"const size_t {symbol}[] = {{{values}}};\n"


def _blob_source(name: str, what: str, offsets: Sequence[int]) -> str:
    return (f"/* {name}_{what}.c: {name}_{what}.bin in .rodata. Generated; do not edit. */\n"
            f'#include "{name}.h"\n\n'
            + _incbin(f"{name}_{what}", f"{name}_{what}.bin") + "\n"
            + _offsets(f"{name}_{what}_offsets", offsets))


def _harness(name: str, m: executable_pb2.ExecutableManifest,
             input_offsets: Sequence[int]) -> str:
    up = name.upper()
    n_out = len(m.outputs)
    out_decls = "\n".join(
        f"static unsigned char output{i}[{up}_OUTPUT{i}_BYTES + 1] "
        f"__attribute__((aligned({ALIGNMENT})));" for i in range(n_out))
    prints = []
    for i, a in enumerate(m.outputs):
        size = torch.empty((), dtype=_part_dtype(PROTO_TO_DTYPE[a.type.dtype])).element_size()
        shape = "x".join(str(d) for d in a.type.shape) or "scalar"
        prints.append(f'  printf("kiln-output {i} {_DTYPE_NAMES[a.type.dtype]} {shape}\\n");\n'
                      f"  print_elements(output{i}, {up}_OUTPUT{i}_BYTES, {size});")
    pointers = ([f"(void *)({name}_weights + {name}_weights_offsets[{i}])"
                 for i in range(len(m.parameters))]
                + [f"(void *)({name}_inputs + {name}_inputs_offsets[{i}])"
                   for i in range(len(m.inputs))]
                + [f"output{i}" for i in range(n_out)])
    return f"""/* {name}.c: runs the Kiln bundle '{name}' once on its example inputs and
 * prints the outputs over semihosting. Generated; do not edit. */
#include "{name}.h"

#include <stdio.h>
#include <string.h>

/* The example inputs, from {name}_inputs.bin. */
{_incbin(f"{name}_inputs", f"{name}_inputs.bin")}extern const unsigned char {name}_inputs[];
{_offsets(f"{name}_inputs_offsets", input_offsets)}
{out_decls}

/* Elements as hex bit patterns, eight to a line: exact, and no float
 * formatting code in the image. */
static void print_elements(const unsigned char *data, size_t bytes, size_t size) {{
  for (size_t at = 0, n = 0; at < bytes; at += size, ++n) {{
    unsigned long long bits = 0;
    memcpy(&bits, data + at, size);
    printf(size == 8 ? "%016llx" : size == 4 ? "%08llx" : size == 2 ? "%04llx" : "%02llx",
           bits);
    putchar(n % 8 == 7 || at + size >= bytes ? '\\n' : ' ');
  }}
}}

int main(void) {{
#if KILN_BUNDLE_VECTOR
  /* Machine mode starts with the vector unit off: set mstatus.VS to Initial. */
  unsigned long vs = 1ul << 9;
  __asm__ volatile("csrs mstatus, %0" : : "r"(vs));
#endif
  void *buffers[] = {{
    {(','+chr(10)+'    ').join(pointers)}
  }};
  kiln_invoke(buffers);
{chr(10).join(prints)}
  printf("kiln-done\\n");
  return 0;
}}
"""


def _linker_script(data_bytes: int) -> str:
    # Code, read-only data (weights, inputs) in the first region; data, heap
    # and stack after it. qemu's virt board gives 128 MiB of RAM by default.
    flash = max(16 << 20, (data_bytes + (4 << 20) + 0xFFFFF) & ~0xFFFFF)
    return f"""/* Memory map for QEMU's riscv64 'virt' machine booted with -bios none:
 * RAM starts at 0x80000000, where execution begins. Generated by Kiln. */
__flash = 0x80000000;
__flash_size = {flash:#x};
__ram = 0x80000000 + {flash:#x};
__ram_size = 0x4000000;
__stack_size = 0x100000;
__heap_size = 0x2000000;
INCLUDE picolibc.ld
"""


def _makefile(name: str, vector: bool, vlen: int) -> str:
    cpu = f"rv64,v=true,vext_spec=v1.0,vlen={vlen},elen=64" if vector else "rv64,v=false"
    return f"""# Builds and runs the Kiln bundle '{name}'. Generated by Kiln.
# Needs riscv64-unknown-elf-gcc, picolibc-riscv64-unknown-elf and
# qemu-system-riscv64 (Debian: gcc-riscv64-unknown-elf,
# picolibc-riscv64-unknown-elf, qemu-system-misc).
NAME := {name}
CC := riscv64-unknown-elf-gcc
QEMU := qemu-system-riscv64
QEMU_CPU := {cpu}
# The harness is rv64gc (picolibc's lp64d multilib); the model object
# carries its own ISA ({'rv64gcv' if vector else 'rv64gc'}).
CFLAGS := -march=rv64gc -mabi=lp64d -mcmodel=medany -O2 -Wall \\
          -DKILN_BUNDLE_VECTOR={1 if vector else 0} \\
          --specs=picolibc.specs --oslib=semihost --crt0=semihost

# No implicit rules: $(NAME)_model.o comes from the daemon, not from a .c.
.SUFFIXES:

$(NAME).elf: $(NAME).c $(NAME)_weights.c $(NAME).h $(NAME)_model.o $(NAME).ld \\
             $(NAME)_weights.bin $(NAME)_inputs.bin
\t$(CC) $(CFLAGS) -T$(NAME).ld -o $@ $(NAME).c $(NAME)_weights.c $(NAME)_model.o -lm

run: $(NAME).elf
\t$(QEMU) -machine virt -bios none -nographic -cpu $(QEMU_CPU) \\
\t  -semihosting-config enable=on,target=native -kernel $<

clean:
\trm -f $(NAME).elf

.PHONY: run clean
"""


def toolchain_missing() -> list[str]:
    """The bundle tools this machine lacks (empty when it can build and run)."""
    return [t for t in ("make", "riscv64-unknown-elf-gcc", "qemu-system-riscv64")
            if shutil.which(t) is None]
