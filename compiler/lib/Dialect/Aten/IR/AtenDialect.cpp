//===- AtenDialect.cpp - ATen dialect registration ------------------------===//
//
// This file implements the `aten` dialect's registration.
//
//===----------------------------------------------------------------------===//
#include "kiln/Dialect/Aten/IR/AtenDialect.h"
#include "kiln/Dialect/Aten/IR/AtenOps.h"

using namespace mlir;
using namespace kiln::aten;

#include "kiln/Dialect/Aten/IR/AtenOpsDialect.cpp.inc"

void AtenDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "kiln/Dialect/Aten/IR/AtenOps.cpp.inc"
      >();
}
