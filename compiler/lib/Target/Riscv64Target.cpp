//===- Riscv64Target.cpp - the riscv64 target -----------------------------===//
//
// This file implements the `riscv64` target: rv64gc, with the V extension at
// a configurable minimum VLEN unless scalar code is asked for, through LLVM's
// RISC-V back end. Linux artifacts are ELF shared objects that the qemu agent
// loads under qemu-riscv64; bare-metal artifacts are relocatable objects for
// riscv64-unknown-elf that the bundle exporter links with picolibc.
//
//===----------------------------------------------------------------------===//
#include "kiln/Target/Target.h"

#include "MachineCode.h"
#include "ScalarFloatToInt.h"
#include "TargetRuntime.h"
#include "kiln/common/Status.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace kiln::compiler {
namespace {

constexpr int kDefaultVlen = 128;
constexpr int kMaxVlen = 4096;

/// rv64gc: the general-purpose ISA every Linux riscv64 distribution targets.
constexpr const char *kBaseFeatures = "+m,+a,+f,+d,+c,+zicsr,+zifencei";

bool isPowerOfTwo(int value) { return value > 0 && (value & (value - 1)) == 0; }

class Riscv64Target final : public Target {
public:
  std::string name() const override { return "riscv64"; }

  absl::StatusOr<v1::CompileOptions>
  resolveOptions(const v1::CompileOptions &options) const override {
    ASSIGN_OR_RETURN(v1::CompileOptions resolved, Target::resolveOptions(options));
    // Canonical: the default VLEN is 0, and riscv options that are all
    // defaults are absent, so that equivalent requests share one key.
    if (resolved.riscv().vlen() == kDefaultVlen)
      resolved.mutable_riscv()->set_vlen(0);
    if (resolved.has_riscv() && resolved.riscv().ByteSizeLong() == 0)
      resolved.clear_riscv();
    return resolved;
  }

  absl::StatusOr<MachineSpec>
  machine(const v1::CompileOptions &options) const override {
    const v1::RiscvOptions &riscv = options.riscv();
    int vlen = riscv.vlen() == 0 ? kDefaultVlen : riscv.vlen();
    if (vlen < kDefaultVlen || vlen > kMaxVlen || !isPowerOfTwo(vlen))
      return absl::InvalidArgumentError(absl::StrCat(
          "options.riscv.vlen must be a power of two in ", kDefaultVlen, "..",
          kMaxVlen, " (or 0 for ", kDefaultVlen, "), got ", riscv.vlen()));
    if (riscv.scalar_only() && riscv.vlen() != 0)
      return absl::InvalidArgumentError(
          "options.riscv.vlen is set but options.riscv.scalar_only disables "
          "the vector extension");

    MachineSpec spec;
    spec.cpu = "generic-rv64";
    // No buffer plan, measured: with it resnet18 retired 3.4 % (VLEN 128)
    // and 7 % (VLEN 256) more instructions under qemu, its assembly 12 %
    // longer, for a few dozen mallocs saved (bench/bench_riscv.py --model
    // resnet18). Every buffer a view of one arena leaves LLVM one base
    // pointer where separate allocations were known not to alias.
    spec.planBuffers = false;
    spec.abi = "lp64d";
    spec.features = kBaseFeatures;
    if (riscv.bare_metal()) {
      spec.triple = "riscv64-unknown-elf";
      spec.artifactFormat = "elf-relocatable-object";
      spec.pic = false;
    } else {
      spec.triple = "riscv64-unknown-linux-gnu";
      spec.artifactFormat = "elf-shared-object";
    }
    if (riscv.scalar_only()) {
      // 16 scalar accumulators of the 32 FP registers; LLVM scalarizes the
      // tile's 4-wide vectors.
      spec.registerTileM = 4;
      spec.registerTileN = 4;
    } else {
      absl::StrAppend(&spec.features, ",+v");
      if (vlen > kDefaultVlen)
        absl::StrAppend(&spec.features, ",+zvl", vlen, "b");
      // 8 rows x 2 vector registers = 16 of the 32 vector registers.
      spec.registerTileM = 8;
      spec.registerTileN = 2 * vlen / 32;
    }
    return spec;
  }

  absl::StatusOr<std::string>
  emitArtifact(llvm::Module &module, const MachineSpec &machine, int optLevel,
               std::string *assembly) const override {
    // Vector float-to-int conversions are RVV .rtz instructions, which the
    // qemu-riscv64 of Debian 12 cannot run: kept scalar.
    if (absl::StrContains(machine.features, "+v"))
      keepFloatToIntScalar(module);
    auto object = emitObjectCode(module, machine, optLevel, assembly);
    if (!object.ok())
      return object;
    // Every artifact carries the runtime routines rv64gc lacks (half and
    // bfloat16 conversions); unreferenced ones cost a few hundred bytes.
    std::vector<std::string_view> objects = {*object, riscv64RuntimeObject()};
    if (!machine.pic)
      return linkRelocatable(objects);
    // No libraries: libm/libc symbols resolve when the runner, which links
    // them, loads the shared object. The daemon needs no riscv64 sysroot.
    return linkSharedObject(objects, /*libraryArgs=*/{});
  }
};

} // namespace

const Target &riscv64Target() {
  static const Riscv64Target target;
  return target;
}

} // namespace kiln::compiler
