//===- Targets.cpp - the table of compile targets -------------------------===//
//
// This file lists every target the compiler can build for.
//
//===----------------------------------------------------------------------===//
#include "kiln/Target/Target.h"

#include <array>

namespace kiln::compiler {
namespace {

std::array<const Target *, 2> allTargets() {
  return {&cpuTarget(), &riscv64Target()};
}

} // namespace

const Target *lookupTarget(const std::string &name) {
  for (const Target *target : allTargets())
    if (target->name() == name)
      return target;
  return nullptr;
}

std::vector<std::string> targetNames() {
  std::vector<std::string> names;
  for (const Target *target : allTargets())
    names.push_back(target->name());
  return names;
}

} // namespace kiln::compiler
