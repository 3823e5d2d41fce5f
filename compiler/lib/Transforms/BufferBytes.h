//===- BufferBytes.h - the bytes of a static buffer -----------*- C++ -*-===//
//
// This file defines staticBufferBytes, which kiln-plan-buffers and
// kiln-stack-loop-buffers use to decide which buffers they may move.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "mlir/IR/BuiltinTypes.h"

namespace kiln {

/// The bytes of a buffer of `type`, or 0 when it cannot be a view of bytes:
/// dynamic sizes, a layout or memory space, elements that are not whole
/// bytes (i1) or whose size depends on the target (index).
inline int64_t staticBufferBytes(mlir::MemRefType type) {
  if (!type.hasStaticShape() || !type.getLayout().isIdentity() ||
      type.getMemorySpace())
    return 0;
  mlir::Type element = type.getElementType();
  if (!element.isIntOrFloat())
    return 0;
  unsigned bits = element.getIntOrFloatBitWidth();
  if (bits == 0 || bits % 8 != 0)
    return 0;
  return type.getNumElements() * (bits / 8);
}

} // namespace kiln
