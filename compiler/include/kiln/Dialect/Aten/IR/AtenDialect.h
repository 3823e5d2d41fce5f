//===- AtenDialect.h - ATen dialect declaration ---------------------------===//
//
// This file declares the `aten` dialect class.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "mlir/IR/Dialect.h"

#include "kiln/Dialect/Aten/IR/AtenOpsDialect.h.inc"
