//===- MachineCode.cpp - LLVM IR to object code and shared objects --------===//
//
// This file implements object emission through an LLVM TargetMachine and
// shared-object linking with ld.lld run as a child process.
//
//===----------------------------------------------------------------------===//
#include "MachineCode.h"

#include "kiln/common/ChildProcess.h"
#include "kiln/common/Status.h"

#include "absl/strings/str_cat.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Metadata.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Triple.h"
#include "mlir/ExecutionEngine/OptUtils.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <vector>

#include <unistd.h>


namespace kiln::compiler {
namespace {

void initializeTargets() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeAllTargetInfos();
    llvm::InitializeAllTargets();
    llvm::InitializeAllTargetMCs();
    llvm::InitializeAllAsmPrinters();
    // Inline assembly (riscv64's scalar float-to-int conversions) is
    // parsed when an object file is emitted.
    llvm::InitializeAllAsmParsers();
  });
}

absl::StatusOr<std::string> emitFile(llvm::Module &module,
                                     llvm::TargetMachine &machine,
                                     llvm::CodeGenFileType type) {
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream stream(buffer);
  llvm::legacy::PassManager passes;
  if (machine.addPassesToEmitFile(passes, stream, nullptr, type))
    return absl::InternalError("the target cannot emit this file type");
  passes.run(module);
  return std::string(buffer.data(), buffer.size());
}

absl::StatusOr<std::string> readFile(const std::filesystem::path &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return absl::InternalError(absl::StrCat("cannot read ", path.string()));
  std::stringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

/// Removes a temporary directory when it goes out of scope.
struct TempDir {
  std::filesystem::path path;
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
};

std::string linkerPath() {
  if (const char *env = std::getenv("KILN_LLD"))
    return env;
  return KILN_DEFAULT_LLD;
}

} // namespace

absl::StatusOr<std::string> emitObjectCode(llvm::Module &module,
                                           const MachineSpec &spec,
                                           int optLevel, std::string *assembly) {
  initializeTargets();
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(spec.triple, error);
  if (!target)
    return absl::InternalError(
        absl::StrCat("no LLVM target for ", spec.triple, ": ", error));
  llvm::TargetOptions options;
  options.MCOptions.ABIName = spec.abi;
  std::optional<llvm::CodeModel::Model> codeModel;
  if (!spec.pic && llvm::Triple(spec.triple).isRISCV())
    codeModel = llvm::CodeModel::Medium; // medany: code linked at 0x80000000
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      spec.triple, spec.cpu, spec.features, options,
      spec.pic ? llvm::Reloc::PIC_ : llvm::Reloc::Static, codeModel,
      optLevel >= 3 ? llvm::CodeGenOptLevel::Aggressive
                    : llvm::CodeGenOptLevel::Default));
  if (!machine)
    return absl::InternalError(
        absl::StrCat("cannot create a target machine for ", spec.triple));
  module.setDataLayout(machine->createDataLayout());
  module.setTargetTriple(spec.triple);
  if (!spec.abi.empty())
    module.addModuleFlag(llvm::Module::Error, "target-abi",
                         llvm::MDString::get(module.getContext(), spec.abi));

  auto optimize = mlir::makeOptimizingTransformer(
      static_cast<unsigned>(optLevel), /*sizeLevel=*/0, machine.get());
  if (llvm::Error err = optimize(&module)) {
    std::string message;
    llvm::raw_string_ostream os(message);
    os << err;
    return absl::InternalError(absl::StrCat("LLVM optimisation failed: ", message));
  }
  if (assembly) {
    ASSIGN_OR_RETURN(*assembly,
                     emitFile(module, *machine, llvm::CodeGenFileType::AssemblyFile));
  }
  return emitFile(module, *machine, llvm::CodeGenFileType::ObjectFile);
}

std::vector<std::string> hostLibraries() {
  std::vector<std::string> args;
  for (const char *dir : {"/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu"})
    args.push_back(absl::StrCat("-L", dir));
  args.insert(args.end(), {"--as-needed", "-lm", "-lc"});
  return args;
}

namespace {

/// Runs ld.lld on `objects` with `flags`; returns the output file's bytes.
absl::StatusOr<std::string> runLinker(const std::vector<std::string_view> &objects,
                                      const std::vector<std::string> &flags,
                                      const std::vector<std::string> &libraryArgs) {
  std::string pattern =
      (std::filesystem::temp_directory_path() / "kiln-link-XXXXXX").string();
  if (!mkdtemp(pattern.data()))
    return absl::InternalError("cannot create a temporary link directory");
  TempDir dir{pattern};
  std::filesystem::path outputPath = dir.path / "linked";
  std::filesystem::path logPath = dir.path / "link.log";
  std::string linker = linkerPath();
  std::vector<std::string> args = {linker};
  args.insert(args.end(), flags.begin(), flags.end());
  args.insert(args.end(), {"-o", outputPath.string()});
  for (size_t i = 0; i < objects.size(); ++i) {
    std::filesystem::path objectPath = dir.path / absl::StrCat("input", i, ".o");
    std::ofstream out(objectPath, std::ios::binary);
    out.write(objects[i].data(), static_cast<std::streamsize>(objects[i].size()));
    if (!out)
      return absl::InternalError("cannot write an object file for the linker");
    args.push_back(objectPath.string());
  }
  args.insert(args.end(), libraryArgs.begin(), libraryArgs.end());
  absl::StatusOr<ChildExit> exit = runChildProcess(std::move(args), logPath);
  if (!exit.ok())
    return exit.status();
  if (!exit->succeeded()) {
    auto log = readFile(logPath);
    return absl::InternalError(absl::StrCat("linking failed (", linker, " ",
                                            exit->describe(), "): ",
                                            log.ok() ? *log : "(no log)"));
  }
  return readFile(outputPath);
}

} // namespace

absl::StatusOr<std::string>
linkSharedObject(const std::vector<std::string_view> &objects,
                 const std::vector<std::string> &libraryArgs) {
  return runLinker(objects, {"-shared", "--hash-style=gnu"}, libraryArgs);
}

absl::StatusOr<std::string>
linkRelocatable(const std::vector<std::string_view> &objects) {
  return runLinker(objects, {"-r"}, {});
}

} // namespace kiln::compiler
