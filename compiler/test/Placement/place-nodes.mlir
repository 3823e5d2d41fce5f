// RUN: kiln-opt %s -kiln-place-nodes | FileCheck %s
// RUN: kiln-opt %s -kiln-place-nodes=target=riscv64 | FileCheck %s
// RUN: kiln-opt %s -kiln-place-nodes=target=mdla | FileCheck %s --check-prefix=MDLA
// RUN: not kiln-opt %s -kiln-place-nodes=target=tpu 2>&1 | FileCheck %s --check-prefix=BAD

// Placement of an imported graph: ops with the same kiln.node are one node
// and go together; a node kept as aten.operator goes to the host with the
// importer's reason; every other node is lowered on its own as the target
// lowers it (to linalg for cpu and riscv64; the ONNX emitter for mdla).

// CHECK-LABEL: func.func @kiln_main
// CHECK: aten.relu{{.*}}kiln.node = 0 : i64, kiln.placement = "target"
// CHECK: aten.operator "aten.lgamma.default"{{.*}}kiln.node = 1 : i64, kiln.placement = "host", kiln.placement_reason = "unsupported op 'aten.lgamma.default'"
// A node's constant goes with it.
// CHECK: aten.constant{{.*}}kiln.node = 2 : i64, kiln.placement = "target"
// CHECK: aten.add{{.*}}kiln.node = 2 : i64, kiln.placement = "target"
// The lowering refuses a bool convolution: the node goes to the host.
// CHECK: aten.convolution{{.*}}kiln.node = 3 : i64, kiln.placement = "host", kiln.placement_reason = "its lowering to linalg failed: {{.*}}aten.convolution
// An aten op without kiln.node (a lit test's own) is a node of its own.
// CHECK: aten.pointwise "round"{{.*}}kiln.placement = "target"
// CHECK-NOT: kiln.node = 4

// mdla runs relu and add on f32, but not round.
// MDLA: aten.relu{{.*}}kiln.placement = "target"
// MDLA: aten.operator{{.*}}kiln.placement = "host"
// MDLA: aten.constant{{.*}}kiln.placement = "target"
// MDLA: aten.add{{.*}}kiln.placement = "target"
// MDLA: aten.convolution{{.*}}kiln.placement = "host", kiln.placement_reason = "target 'mdla' runs f32 tensors only
// MDLA: aten.pointwise "round"{{.*}}kiln.placement = "host", kiln.placement_reason = "target 'mdla' does not run aten.pointwise: pointwise 'round'

// BAD: kiln-place-nodes: unknown target 'tpu'; known: cpu, riscv64, mdla, acap

func.func @kiln_main(%x: tensor<2x3xf32>, %xi: tensor<1x1x3x3xi1>,
                     %wi: tensor<1x1x1x1xi1>)
    -> (tensor<2x3xf32>, tensor<1x1x3x3xi1>, tensor<2x3xf32>) {
  %0 = aten.relu %x {kiln.node = 0 : i64} : tensor<2x3xf32>
  %1 = aten.operator "aten.lgamma.default"(%0)
      {kiln.node = 1 : i64, reason = "unsupported op 'aten.lgamma.default'"}
      : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %c = aten.constant {kiln.node = 2 : i64} dense<1.0> : tensor<f32>
  %2 = aten.add %1, %c {kiln.node = 2 : i64}
      : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %3 = aten.convolution %xi, %wi {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>,
      dilation = array<i64: 1, 1>, output_padding = array<i64: 0, 0>,
      transposed = false, groups = 1 : i64, kiln.node = 3 : i64}
      : (tensor<1x1x3x3xi1>, tensor<1x1x1x1xi1>) -> tensor<1x1x3x3xi1>
  %4 = aten.pointwise "round" %2 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %2, %3, %4 : tensor<2x3xf32>, tensor<1x1x3x3xi1>, tensor<2x3xf32>
}
