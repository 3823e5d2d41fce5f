//===- Registration.h - the dialects and interfaces Kiln uses -------------===//
//
// This file declares the one place that lists every dialect, interface model
// and translation Kiln's pipelines need. Only these are registered: the
// InitAll* headers would cost a minute of build per file that includes them.
//
//===----------------------------------------------------------------------===//
#pragma once

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace kiln {

/// Adds Kiln's dialects and the external models its passes rely on.
void registerKilnDialects(mlir::DialectRegistry &registry);

/// Registers Kiln's passes and pipelines, and the upstream passes they use,
/// with the global pass registry (for kiln-opt).
void registerKilnPasses();

} // namespace kiln
