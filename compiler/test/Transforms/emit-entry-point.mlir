// RUN: kiln-opt %s -split-input-file -kiln-emit-entry-point -verify-diagnostics | FileCheck %s

// The entry point loads one pointer per callee argument from the array.
// CHECK-LABEL: llvm.func @kiln_invoke
// CHECK-SAME: (%[[ARGS:.+]]: !llvm.ptr)
// CHECK: %[[P0:.+]] = llvm.getelementptr %[[ARGS]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: %[[A0:.+]] = llvm.load %[[P0]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[P1:.+]] = llvm.getelementptr %[[ARGS]][1]
// CHECK: %[[A1:.+]] = llvm.load %[[P1]]
// CHECK: %[[P2:.+]] = llvm.getelementptr %[[ARGS]][2]
// CHECK: %[[A2:.+]] = llvm.load %[[P2]]
// CHECK: llvm.call @kiln_main(%[[A0]], %[[A1]], %[[A2]])
// CHECK: llvm.return
module {
  llvm.func @kiln_main(%a: !llvm.ptr, %b: !llvm.ptr, %c: !llvm.ptr) {
    llvm.return
  }
}

// -----

// expected-error @+1 {{no llvm.func @kiln_main to wrap}}
module {
  llvm.func @other() {
    llvm.return
  }
}

// -----

module {
  // expected-error @+1 {{argument of type 'i64' is not a bare pointer}}
  llvm.func @kiln_main(%a: i64) {
    llvm.return
  }
}
