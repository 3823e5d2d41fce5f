// RUN: kiln-opt %s -split-input-file -kiln-decompose-aten | FileCheck %s

// Sorted (stable, NaN last); an element starts a value where it differs
// from the one before ("ne": each NaN a value of its own); the values are
// the starts (a boolean mask, the data-dependent count); each element's
// value index is the running count of starts less one, scattered back
// through the sort's order for the inverse; the counts are ones summed
// into those indices, masked to the indices below the count.
// CHECK-LABEL: func @unique
// CHECK: %[[FLAT:.+]] = aten.view %arg0 : (tensor<2x3xf32>) -> tensor<6xf32>
// CHECK: %[[SORTED:.+]], %[[ORDER:.+]] = aten.sort %[[FLAT]] {descending = false, dim = 0 : i64}
// CHECK: %[[TRUE:.+]] = aten.constant dense<true> : tensor<1xi1>
// CHECK: %[[NEXT:.+]] = aten.slice %[[SORTED]] {offsets = array<i64: 1>, {{.+}} -> tensor<5xf32>
// CHECK: %[[PREV:.+]] = aten.slice %[[SORTED]] {offsets = array<i64: 0>, {{.+}} -> tensor<5xf32>
// CHECK: %[[DIFFERS:.+]] = aten.pointwise "ne" %[[NEXT]], %[[PREV]]
// CHECK: %[[STARTS:.+]] = aten.cat %[[TRUE]], %[[DIFFERS]] {dim = 0 : i64} : (tensor<1xi1>, tensor<5xi1>) -> tensor<6xi1>
// CHECK: %[[VALUES:.+]] = aten.boolean_mask %[[SORTED]], %[[STARTS]] : (tensor<6xf32>, tensor<6xi1>) -> tensor<?xf32>
// CHECK: %[[ONES:.+]] = aten.pointwise "copy" %[[STARTS]] : (tensor<6xi1>) -> tensor<6xi64>
// CHECK: %[[RUNNING:.+]] = aten.cumsum %[[ONES]] {dim = 0 : i64}
// CHECK: %[[SLOT:.+]] = aten.sub %[[RUNNING]], %{{.+}} : (tensor<6xi64>, tensor<i64>) -> tensor<6xi64>
// CHECK: %[[ZEROS:.+]] = aten.constant dense<0> : tensor<6xi64>
// CHECK: %[[INVERSE:.+]] = aten.scatter %[[ZEROS]], %[[ORDER]], %[[SLOT]] {dim = 0 : i64, reduce = "none"}
// CHECK: %[[UNIT:.+]] = aten.constant dense<1> : tensor<6xi64>
// CHECK: %[[PERSLOT:.+]] = aten.scatter %[[ZEROS]], %[[SLOT]], %[[UNIT]] {dim = 0 : i64, reduce = "sum"}
// CHECK: %[[COUNT:.+]] = aten.sum %[[ONES]] {dims = array<i64: 0>} : (tensor<6xi64>) -> tensor<i64>
// CHECK: %[[INDEX:.+]] = aten.constant dense<[0, 1, 2, 3, 4, 5]> : tensor<6xi64>
// CHECK: %[[LIVE:.+]] = aten.pointwise "lt" %[[INDEX]], %[[COUNT]]
// CHECK: %[[COUNTS:.+]] = aten.boolean_mask %[[PERSLOT]], %[[LIVE]] : (tensor<6xi64>, tensor<6xi1>) -> tensor<?xi64>
// CHECK: %[[SHAPED:.+]] = aten.view %[[INVERSE]] : (tensor<6xi64>) -> tensor<2x3xi64>
// CHECK: return %[[VALUES]], %[[SHAPED]], %[[COUNTS]]
func.func @unique(%x: tensor<2x3xf32>) -> (tensor<?xf32>, tensor<2x3xi64>, tensor<?xi64>) {
  %v, %i, %c = aten.unique %x : (tensor<2x3xf32>) -> (tensor<?xf32>, tensor<2x3xi64>, tensor<?xi64>)
  return %v, %i, %c : tensor<?xf32>, tensor<2x3xi64>, tensor<?xi64>
}

// -----

// One element: it is the one value (no neighbours to compare).
// CHECK-LABEL: func @unique_of_one
// CHECK: %[[SORTED:.+]], %{{.+}} = aten.sort
// CHECK-NEXT: %[[TRUE:.+]] = aten.constant dense<true> : tensor<1xi1>
// CHECK-NEXT: aten.boolean_mask %[[SORTED]], %[[TRUE]] : (tensor<1xi64>, tensor<1xi1>) -> tensor<?xi64>
// CHECK: aten.view %{{.+}} : (tensor<1xi64>) -> tensor<i64>
func.func @unique_of_one(%x: tensor<i64>) -> (tensor<?xi64>, tensor<i64>, tensor<?xi64>) {
  %v, %i, %c = aten.unique %x : (tensor<i64>) -> (tensor<?xi64>, tensor<i64>, tensor<?xi64>)
  return %v, %i, %c : tensor<?xi64>, tensor<i64>, tensor<?xi64>
}

// -----

// consecutive (torch.unique_consecutive): no sort; the flattened elements
// in their own order, runs of equal neighbours collapsed, the inverse
// scattered back through the identity order.
// CHECK-LABEL: func @unique_consecutive
// CHECK-NOT: aten.sort
// CHECK: %[[FLAT:.+]] = aten.view %{{.+}} : (tensor<2x3xf32>) -> tensor<6xf32>
// CHECK: %[[ORDER:.+]] = aten.constant dense<[0, 1, 2, 3, 4, 5]> : tensor<6xi64>
// CHECK: %[[NEXT:.+]] = aten.slice %[[FLAT]] {offsets = array<i64: 1>
// CHECK: %[[PREV:.+]] = aten.slice %[[FLAT]] {offsets = array<i64: 0>
// CHECK: aten.pointwise "ne" %[[NEXT]], %[[PREV]]
// CHECK: %[[V:.+]] = aten.boolean_mask %[[FLAT]], %{{.+}} : (tensor<6xf32>, tensor<6xi1>) -> tensor<?xf32>
// CHECK: aten.scatter %{{.+}}, %[[ORDER]], %{{.+}} {dim = 0 : i64, reduce = "none"}
// CHECK: return %[[V]]
func.func @unique_consecutive(%x: tensor<2x3xf32>) -> (tensor<?xf32>, tensor<2x3xi64>, tensor<?xi64>) {
  %v, %i, %c = aten.unique %x {consecutive} : (tensor<2x3xf32>) -> (tensor<?xf32>, tensor<2x3xi64>, tensor<?xi64>)
  return %v, %i, %c : tensor<?xf32>, tensor<2x3xi64>, tensor<?xi64>
}

// -----

// unique_dim: the slices along dim 1 become rows (a permute); the rows are
// ordered by one stable sort per element position, the last position
// first, each sorting that position's column in the order so far; then
// rows compare whole ("ne", then any over a row), and the values move back
// into place (the dynamic dim is dim 1 again).
// CHECK-LABEL: func @unique_dim
// CHECK: %[[ROWS:.+]] = aten.permute %arg0 {dims = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
// CHECK: %[[LAST:.+]] = aten.slice %[[ROWS]] {offsets = array<i64: 0, 1>, strides = array<i64: 1, 1>} : (tensor<3x2xf32>) -> tensor<3x1xf32>
// CHECK: %[[LASTV:.+]] = aten.view %[[LAST]] : (tensor<3x1xf32>) -> tensor<3xf32>
// CHECK: %{{.+}}, %[[ORDER1:.+]] = aten.sort %[[LASTV]] {descending = false, dim = 0 : i64}
// CHECK: %[[FIRST:.+]] = aten.slice %[[ROWS]] {offsets = array<i64: 0, 0>, strides = array<i64: 1, 1>} : (tensor<3x2xf32>) -> tensor<3x1xf32>
// CHECK: %[[FIRSTV:.+]] = aten.view %[[FIRST]]
// CHECK: %[[FIRSTO:.+]] = aten.index_select %[[FIRSTV]], %[[ORDER1]] {dim = 0 : i64}
// CHECK: %{{.+}}, %[[BYFIRST:.+]] = aten.sort %[[FIRSTO]]
// CHECK: %[[ORDER:.+]] = aten.index_select %[[ORDER1]], %[[BYFIRST]] {dim = 0 : i64}
// CHECK: %[[SORTED:.+]] = aten.index_select %[[ROWS]], %[[ORDER]] {dim = 0 : i64} : (tensor<3x2xf32>, tensor<3xi64>) -> tensor<3x2xf32>
// CHECK: %[[NEXT:.+]] = aten.slice %{{.+}} {offsets = array<i64: 1, 0>, strides = array<i64: 1, 1>} : (tensor<3x2xf32>) -> tensor<2x2xf32>
// CHECK: %[[PREV:.+]] = aten.slice %{{.+}} {offsets = array<i64: 0, 0>, strides = array<i64: 1, 1>} : (tensor<3x2xf32>) -> tensor<2x2xf32>
// CHECK: %[[NE:.+]] = aten.pointwise "ne" %[[NEXT]], %[[PREV]] : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xi1>
// CHECK: %[[DIFFERS:.+]] = aten.any %[[NE]] {dims = array<i64: 1>} : (tensor<2x2xi1>) -> tensor<2xi1>
// CHECK: %[[STARTS:.+]] = aten.cat %{{.+}}, %[[DIFFERS]] {dim = 0 : i64} : (tensor<1xi1>, tensor<2xi1>) -> tensor<3xi1>
// CHECK: %[[VALUES:.+]] = aten.boolean_mask %[[SORTED]], %[[STARTS]] : (tensor<3x2xf32>, tensor<3xi1>) -> tensor<?x2xf32>
// CHECK: %[[INVERSE:.+]] = aten.scatter %{{.+}}, %[[ORDER]], %{{.+}} {dim = 0 : i64, reduce = "none"}
// CHECK: %[[COUNTS:.+]] = aten.boolean_mask %{{.+}} : (tensor<3xi64>, tensor<3xi1>) -> tensor<?xi64>
// CHECK: %[[BACK:.+]] = aten.permute %[[VALUES]] {dims = array<i64: 1, 0>} : (tensor<?x2xf32>) -> tensor<2x?xf32>
// CHECK: return %[[BACK]], %[[INVERSE]], %[[COUNTS]]
func.func @unique_dim(%x: tensor<2x3xf32>) -> (tensor<2x?xf32>, tensor<3xi64>, tensor<?xi64>) {
  %v, %i, %c = aten.unique_dim %x {dim = 1 : i64} : (tensor<2x3xf32>) -> (tensor<2x?xf32>, tensor<3xi64>, tensor<?xi64>)
  return %v, %i, %c : tensor<2x?xf32>, tensor<3xi64>, tensor<?xi64>
}

// -----

// consecutive along dim 0 (unique_consecutive with a dim): no sort and no
// permute; the rows keep their order.
// CHECK-LABEL: func @unique_dim_consecutive
// CHECK-NOT: aten.sort
// CHECK-NOT: aten.permute
// CHECK: aten.view %arg0 : (tensor<4x2x3xi64>) -> tensor<4x6xi64>
// CHECK: aten.any %{{.+}} {dims = array<i64: 1>} : (tensor<3x6xi1>) -> tensor<3xi1>
// CHECK: %[[V:.+]] = aten.boolean_mask %arg0, %{{.+}} : (tensor<4x2x3xi64>, tensor<4xi1>) -> tensor<?x2x3xi64>
// CHECK: return %[[V]]
func.func @unique_dim_consecutive(%x: tensor<4x2x3xi64>) -> (tensor<?x2x3xi64>, tensor<4xi64>, tensor<?xi64>) {
  %v, %i, %c = aten.unique_dim %x {consecutive, dim = 0 : i64} : (tensor<4x2x3xi64>) -> (tensor<?x2x3xi64>, tensor<4xi64>, tensor<?xi64>)
  return %v, %i, %c : tensor<?x2x3xi64>, tensor<4xi64>, tensor<?xi64>
}
