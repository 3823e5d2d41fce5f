//===- KernelSites.cpp - the kernel-library call sites of an LLVM module --===//
#include "KernelSites.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/Module.h"

namespace kiln::compiler::acap {

std::vector<KernelSite> collectKernelSites(const llvm::Module &module) {
  // The stems kiln-convert-aten-to-kernel-calls names the geometry globals
  // after (each site's state slot is the same stem's mutable global).
  static const std::pair<llvm::StringRef, const char *> kStems[] = {
      {"__kiln_convolution", "convolution"},
      {"__kiln_matmul", "matmul"},
      {"__kiln_elementwise", "elementwise"}};
  std::vector<KernelSite> sites;
  for (const llvm::GlobalVariable &global : module.globals()) {
    if (!global.isConstant() || !global.hasInitializer())
      continue;
    for (const auto &[stem, kind] : kStems) {
      if (!global.getName().starts_with(stem))
        continue;
      auto *data = llvm::dyn_cast<llvm::ConstantDataArray>(global.getInitializer());
      if (!data || !data->getElementType()->isIntegerTy(64))
        continue;
      KernelSite site{kind, {}};
      for (unsigned i = 0; i < data->getNumElements(); ++i)
        site.geometry.push_back(int64_t(data->getElementAsInteger(i)));
      sites.push_back(std::move(site));
    }
  }
  return sites;
}

} // namespace kiln::compiler::acap
