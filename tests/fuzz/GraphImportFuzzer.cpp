//===- GraphImportFuzzer.cpp - fuzz graph import into the compiler ---------===//
//
// libFuzzer target: bytes as a kiln.v1.Graph, through the ways the compiler
// takes a graph in: placement's per-node support check (for cpu, and for
// mdla through its ONNX emitter), and the whole-graph import into the aten
// dialect with its verifier. All must answer with a status, never crash.
//
//===----------------------------------------------------------------------===//
#include "Registration.h"
#include "kiln/Compiler/NodeSupport.h"
#include "kiln/Import/GraphImporter.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  kiln::v1::Graph graph;
  if (!graph.ParseFromArray(data, static_cast<int>(size)))
    return 0;
  // cpu checks each node through the linalg lowering; mdla through its
  // ONNX emitter.
  for (const char *target : {"cpu", "mdla"}) {
    kiln::compiler::CompileOptions options;
    options.target = target;
    (void)kiln::compiler::checkNodeSupport(graph, options);
  }

  static mlir::DialectRegistry *registry = [] {
    auto *made = new mlir::DialectRegistry();
    kiln::registerKilnDialects(*made);
    return made;
  }();
  mlir::MLIRContext context(*registry, mlir::MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  // Diagnostics are part of a failed import's status, not output.
  mlir::ScopedDiagnosticHandler quiet(&context,
                                      [](mlir::Diagnostic &) { return mlir::success(); });
  auto module = kiln::importGraph(graph, context);
  if (module.ok())
    (void)mlir::verify(**module);
  return 0;
}
