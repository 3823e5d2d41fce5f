// RUN: kiln-opt %s -split-input-file -kiln-lower-parallel-launches -verify-diagnostics | FileCheck %s

// The launch becomes kiln_rt_parallel_for(task, context, count): the
// live-ins are stored into a stack context allocated once in the caller's
// entry block (not per iteration of the caller's loop), and the task
// trampoline loads them back and calls the body, now internal.
// CHECK-LABEL: llvm.func @caller
// CHECK-SAME: (%[[A:.+]]: !llvm.ptr, %[[S:.+]]: f32)
// CHECK: %[[SLOT:.+]] = llvm.alloca %{{.+}} x !llvm.struct<(ptr, f32)>
// CHECK: ^bb1(%[[I:.+]]: i64):
// CHECK: %[[F0:.+]] = llvm.getelementptr %[[SLOT]][0, 0]
// CHECK: llvm.store %[[A]], %[[F0]] : !llvm.ptr, !llvm.ptr
// CHECK: %[[F1:.+]] = llvm.getelementptr %[[SLOT]][0, 1]
// CHECK: llvm.store %[[S]], %[[F1]] : f32, !llvm.ptr
// CHECK: %[[TASK:.+]] = llvm.mlir.addressof @body_task
// CHECK: llvm.call @kiln_rt_parallel_for(%[[TASK]], %[[SLOT]], %{{.+}}) : (!llvm.ptr, !llvm.ptr, i64) -> ()
// CHECK-NOT: @launch
// CHECK: llvm.func internal @body(
// CHECK: llvm.func internal @body_task(%[[CTX:.+]]: !llvm.ptr, %[[BEGIN:.+]]: i64, %[[END:.+]]: i64)
// CHECK: %[[G0:.+]] = llvm.getelementptr %[[CTX]][0, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(ptr, f32)>
// CHECK: %[[L0:.+]] = llvm.load %[[G0]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[G1:.+]] = llvm.getelementptr %[[CTX]][0, 1]
// CHECK: %[[L1:.+]] = llvm.load %[[G1]] : !llvm.ptr -> f32
// CHECK: llvm.call @body(%[[BEGIN]], %[[END]], %[[L0]], %[[L1]])
// CHECK: llvm.func @kiln_rt_parallel_for(!llvm.ptr, !llvm.ptr, i64)
llvm.func @caller(%a: !llvm.ptr, %s: f32) {
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %c1 = llvm.mlir.constant(1 : i64) : i64
  %c3 = llvm.mlir.constant(3 : i64) : i64
  %n = llvm.mlir.constant(64 : i64) : i64
  llvm.br ^bb1(%c0 : i64)
^bb1(%i: i64):
  %more = llvm.icmp "slt" %i, %c3 : i64
  llvm.cond_br %more, ^bb2, ^bb3
^bb2:
  llvm.call @launch(%n, %a, %s) : (i64, !llvm.ptr, f32) -> ()
  %next = llvm.add %i, %c1 : i64
  llvm.br ^bb1(%next : i64)
^bb3:
  llvm.return
}
llvm.func @body(%begin: i64, %end: i64, %a: !llvm.ptr, %s: f32) {
  llvm.return
}
llvm.func @launch(i64, !llvm.ptr, f32) attributes {kiln.parallel_body = @body}

// -----

// A launch whose body takes other live-ins is refused, not miscompiled.
llvm.func @body(%begin: i64, %end: i64, %a: !llvm.ptr) {
  llvm.return
}
// expected-error @+1 {{does not match its parallel body @body}}
llvm.func @launch(i64, f32) attributes {kiln.parallel_body = @body}
