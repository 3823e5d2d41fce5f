//===- DiagnosticCollector.h - MLIR diagnostics into error messages -------===//
//
// This file declares a scoped handler that gathers MLIR diagnostics (with
// their locations) into text for absl::Status messages.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace kiln {

class DiagnosticCollector {
public:
  explicit DiagnosticCollector(mlir::MLIRContext &context)
      : handler(&context, [this](mlir::Diagnostic &diag) {
          llvm::raw_string_ostream os(text);
          if (!text.empty())
            os << "\n";
          os << diag.getLocation() << ": " << diag;
          for (const mlir::Diagnostic &note : diag.getNotes())
            os << "\n  note: " << note;
          return mlir::success();
        }) {}

  /// Everything collected so far, then cleared.
  std::string take() { return std::exchange(text, {}); }

private:
  std::string text;
  mlir::ScopedDiagnosticHandler handler;
};

} // namespace kiln
