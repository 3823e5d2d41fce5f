// RUN: kiln-opt %s -split-input-file -kiln-decompose-aten | FileCheck %s

// With self and matching shapes: the primitive scatter alone.
// CHECK-LABEL: func @scatter_add
// CHECK-SAME: (%[[X:.+]]: tensor<3x6xf32>, %[[I:.+]]: tensor<3x4xi64>, %[[S:.+]]: tensor<3x4xf32>)
// CHECK-NOT: aten.scatter_reduce
// CHECK: %[[R:.+]] = aten.scatter %[[X]], %[[I]], %[[S]] {dim = 1 : i64, reduce = "sum"}
// CHECK-NEXT: return %[[R]]
func.func @scatter_add(%x: tensor<3x6xf32>, %i: tensor<3x4xi64>, %s: tensor<3x4xf32>) -> tensor<3x6xf32> {
  %0 = aten.scatter_reduce %x, %i, %s {dim = 1 : i64, reduce = "sum"} : (tensor<3x6xf32>, tensor<3x4xi64>, tensor<3x4xf32>) -> tensor<3x6xf32>
  return %0 : tensor<3x6xf32>
}

// -----

// Without self: amax from its identity (-inf), and self kept where the
// scattered count of landings is 0. src's part past index is sliced off.
// CHECK-LABEL: func @amax_without_self
// CHECK-SAME: (%[[X:.+]]: tensor<3x5xf32>, %[[I:.+]]: tensor<3x4xi64>, %[[S:.+]]: tensor<3x6xf32>)
// CHECK-DAG: %[[SRC:.+]] = aten.slice %[[S]] {{.*}} -> tensor<3x4xf32>
// CHECK-DAG: %[[LOW:.+]] = aten.constant dense<0xFF800000> : tensor<3x5xf32>
// CHECK: %[[RED:.+]] = aten.scatter %[[LOW]], %[[I]], %[[SRC]] {dim = 1 : i64, reduce = "amax"}
// CHECK: %[[COUNT:.+]] = aten.scatter %{{.+}}, %[[I]], %{{.+}} {dim = 1 : i64, reduce = "sum"} : (tensor<3x5xi64>, tensor<3x4xi64>, tensor<3x4xi64>) -> tensor<3x5xi64>
// CHECK: %[[HIT:.+]] = aten.pointwise "gt" %[[COUNT]], %{{.+}} : (tensor<3x5xi64>, tensor<i64>) -> tensor<3x5xi1>
// CHECK: %[[R:.+]] = aten.pointwise "where" %[[HIT]], %[[RED]], %[[X]]
// CHECK: return %[[R]]
func.func @amax_without_self(%x: tensor<3x5xf32>, %i: tensor<3x4xi64>, %s: tensor<3x6xf32>) -> tensor<3x5xf32> {
  %0 = aten.scatter_reduce %x, %i, %s {dim = 1 : i64, reduce = "amax", include_self = false} : (tensor<3x5xf32>, tensor<3x4xi64>, tensor<3x6xf32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

// Bool amin without self starts from true (the identity of and).
// CHECK-LABEL: func @amin_bool
// CHECK: %[[HIGH:.+]] = aten.constant dense<true> : tensor<2x5xi1>
// CHECK: aten.scatter %[[HIGH]], %{{.+}}, %{{.+}} {dim = 1 : i64, reduce = "amin"}
func.func @amin_bool(%x: tensor<2x5xi1>, %i: tensor<2x6xi64>, %s: tensor<2x6xi1>) -> tensor<2x5xi1> {
  %0 = aten.scatter_reduce %x, %i, %s {dim = 1 : i64, reduce = "amin", include_self = false} : (tensor<2x5xi1>, tensor<2x6xi64>, tensor<2x6xi1>) -> tensor<2x5xi1>
  return %0 : tensor<2x5xi1>
}

// -----

// uint8 mean (widened to i16): the count is scattered in self's type, as
// eager counts; sum and count wrap to 8 bits, then divide rounding down.
// CHECK-LABEL: func @mean_u8
// CHECK: %[[COUNT:.+]] = aten.scatter {{.*}} reduce = "sum"} : (tensor<4x5xi16>, tensor<6x5xi64>, tensor<6x5xi16>) -> tensor<4x5xi16>
// CHECK: %[[SUM:.+]] = aten.scatter %{{.+}}, %{{.+}}, %{{.+}} {dim = 0 : i64, reduce = "sum"} : (tensor<4x5xi16>, tensor<6x5xi64>, tensor<6x5xi16>) -> tensor<4x5xi16>
// CHECK: %[[WRAP:.+]] = aten.pointwise "bitwise_and" %[[SUM]]
// CHECK: %[[WRAPC:.+]] = aten.pointwise "bitwise_and" %[[COUNT]]
// CHECK: %[[ZERO:.+]] = aten.pointwise "eq" %[[WRAPC]]
// CHECK: %[[ONE:.+]] = aten.pointwise "where" %[[ZERO]], %{{.+}}, %[[WRAPC]]
// CHECK: aten.pointwise "div_floor" %[[WRAP]], %[[ONE]]
func.func @mean_u8(%x: tensor<4x5xi16>, %i: tensor<6x5xi64>, %s: tensor<6x5xi16>) -> tensor<4x5xi16> {
  %0 = aten.scatter_reduce %x, %i, %s {dim = 0 : i64, reduce = "mean", wrap_u8} : (tensor<4x5xi16>, tensor<6x5xi64>, tensor<6x5xi16>) -> tensor<4x5xi16>
  return %0 : tensor<4x5xi16>
}

// -----

// An index smaller than self outside dim: self's corner, then inserted back.
// CHECK-LABEL: func @smaller_index
// CHECK-SAME: (%[[X:.+]]: tensor<4x6xf32>
// CHECK: %[[PART:.+]] = aten.slice %[[X]] {{.*}} -> tensor<3x6xf32>
// CHECK: %[[DONE:.+]] = aten.scatter %[[PART]]
// CHECK: aten.insert_slice %[[X]], %[[DONE]]
func.func @smaller_index(%x: tensor<4x6xf32>, %i: tensor<3x2xi64>, %s: tensor<3x4xf32>) -> tensor<4x6xf32> {
  %0 = aten.scatter_reduce %x, %i, %s {dim = 1 : i64, reduce = "none"} : (tensor<4x6xf32>, tensor<3x2xi64>, tensor<3x4xf32>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

// 0-d: the 1-element 1-d scatter, viewed back.
// CHECK-LABEL: func @scalar
// CHECK: aten.scatter {{.*}} : (tensor<1xf32>, tensor<1xi64>, tensor<1xf32>) -> tensor<1xf32>
// CHECK: aten.view %{{.+}} : (tensor<1xf32>) -> tensor<f32>
func.func @scalar(%x: tensor<f32>, %i: tensor<i64>, %s: tensor<f32>) -> tensor<f32> {
  %0 = aten.scatter_reduce %x, %i, %s {dim = 0 : i64, reduce = "none"} : (tensor<f32>, tensor<i64>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// index_reduce is scatter_reduce with index viewed along dim and broadcast
// to source's shape; reduce and include_self carry over.
// CHECK-LABEL: func @index_reduce
// CHECK-SAME: (%[[X:.+]]: tensor<3x5x2xf32>, %[[I:.+]]: tensor<4xi64>, %[[S:.+]]: tensor<3x4x2xf32>)
// CHECK: %[[V:.+]] = aten.view %[[I]] : (tensor<4xi64>) -> tensor<1x4x1xi64>
// CHECK: %[[E:.+]] = aten.expand %[[V]] : (tensor<1x4x1xi64>) -> tensor<3x4x2xi64>
// CHECK-NOT: aten.index_reduce
// CHECK: aten.scatter %{{.+}}, %[[E]], %{{.+}} {dim = 1 : i64, reduce = "prod"}
func.func @index_reduce(%x: tensor<3x5x2xf32>, %i: tensor<4xi64>, %s: tensor<3x4x2xf32>) -> tensor<3x5x2xf32> {
  %0 = aten.index_reduce %x, %i, %s {dim = 1 : i64, reduce = "prod", include_self = false} : (tensor<3x5x2xf32>, tensor<4xi64>, tensor<3x4x2xf32>) -> tensor<3x5x2xf32>
  return %0 : tensor<3x5x2xf32>
}

// -----

// put is index_put over the flattened tensors, viewed back to self's shape.
// CHECK-LABEL: func @put
// CHECK-SAME: (%[[X:.+]]: tensor<3x4xf32>, %[[I:.+]]: tensor<2x2xi64>, %[[V:.+]]: tensor<4xf32>)
// CHECK: %[[F:.+]] = aten.view %[[X]] : (tensor<3x4xf32>) -> tensor<12xf32>
// CHECK: %[[FI:.+]] = aten.view %[[I]] : (tensor<2x2xi64>) -> tensor<4xi64>
// CHECK: %[[P:.+]] = aten.index_put %[[F]], %[[FI]], %[[V]] {accumulate = true}
// CHECK: aten.view %[[P]] : (tensor<12xf32>) -> tensor<3x4xf32>
func.func @put(%x: tensor<3x4xf32>, %i: tensor<2x2xi64>, %v: tensor<4xf32>) -> tensor<3x4xf32> {
  %0 = aten.put %x, %i, %v {accumulate = true} : (tensor<3x4xf32>, tensor<2x2xi64>, tensor<4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}
