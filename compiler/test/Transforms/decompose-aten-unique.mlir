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

// unique_dim: the slices along dim 1 become rows (a permute); the rows (of
// up to 16 elements) are ordered by one stable sort per element position,
// the last position
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
// CHECK: %[[DIFFERS:.+]] = aten.cat %{{.+}}, %[[NE]] {dim = 0 : i64} : (tensor<1x2xi1>, tensor<2x2xi1>) -> tensor<3x2xi1>
// CHECK: %[[STARTS:.+]] = aten.any %[[DIFFERS]] {dims = array<i64: 1>} : (tensor<3x2xi1>) -> tensor<3xi1>
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
// CHECK: aten.any %{{.+}} {dims = array<i64: 1>} : (tensor<4x6xi1>) -> tensor<4xi1>
// CHECK: %[[V:.+]] = aten.boolean_mask %arg0, %{{.+}} : (tensor<4x2x3xi64>, tensor<4xi1>) -> tensor<?x2x3xi64>
// CHECK: return %[[V]]
func.func @unique_dim_consecutive(%x: tensor<4x2x3xi64>) -> (tensor<?x2x3xi64>, tensor<4xi64>, tensor<?xi64>) {
  %v, %i, %c = aten.unique_dim %x {consecutive, dim = 0 : i64} : (tensor<4x2x3xi64>) -> (tensor<?x2x3xi64>, tensor<4xi64>, tensor<?xi64>)
  return %v, %i, %c : tensor<?x2x3xi64>, tensor<4xi64>, tensor<?xi64>
}

// -----

// Rows of more than 16 elements (here 17, along dim 0) are ordered by
// prefix doubling, on the transpose (positions, rows): every position's
// column is dense-ranked at once (one sort along dim 1, run starts, their
// running count less one scattered back through the sort); then positions
// 2j and 2j + 1 pair up, rank_2j * 3 + rank_2j+1 (an odd count's last
// pairs with 0), and are ranked again: 17 -> 9 -> 5 -> 3 -> 2 positions;
// the last pairing leaves one key per row, and its stable sort is the
// order. 6 sorts, not 17.
// CHECK-LABEL: func @unique_dim_long_rows
// CHECK: %[[T:.+]] = aten.permute %{{.+}} {dims = array<i64: 1, 0>} : (tensor<3x17xf32>) -> tensor<17x3xf32>
// CHECK: %[[COLS:.+]], %[[WHERE:.+]] = aten.sort %[[T]] {descending = false, dim = 1 : i64} : (tensor<17x3xf32>) -> (tensor<17x3xf32>, tensor<17x3xi64>)
// CHECK: %[[TRUE:.+]] = aten.constant dense<true> : tensor<17x1xi1>
// CHECK: aten.pointwise "ne" %{{.+}}, %{{.+}} : (tensor<17x2xf32>, tensor<17x2xf32>) -> tensor<17x2xi1>
// CHECK: %[[STARTS:.+]] = aten.cat %[[TRUE]], %{{.+}} {dim = 1 : i64} : (tensor<17x1xi1>, tensor<17x2xi1>) -> tensor<17x3xi1>
// CHECK: %[[RISING:.+]] = aten.cumsum %{{.+}} {dim = 1 : i64} : (tensor<17x3xi64>) -> tensor<17x3xi64>
// CHECK: %[[RANKS:.+]] = aten.scatter %{{.+}}, %[[WHERE]], %{{.+}} {dim = 1 : i64, reduce = "none"}
// CHECK: %[[HIGH:.+]] = aten.slice %[[RANKS]] {offsets = array<i64: 0, 0>, strides = array<i64: 2, 1>} : (tensor<17x3xi64>) -> tensor<9x3xi64>
// CHECK: %[[LOW:.+]] = aten.slice %[[RANKS]] {offsets = array<i64: 1, 0>, strides = array<i64: 2, 1>} : (tensor<17x3xi64>) -> tensor<8x3xi64>
// CHECK: %[[PAD:.+]] = aten.cat %[[LOW]], %{{.+}} {dim = 0 : i64} : (tensor<8x3xi64>, tensor<1x3xi64>) -> tensor<9x3xi64>
// CHECK: %[[SCALED:.+]] = aten.mul %[[HIGH]], %{{.+}} : (tensor<9x3xi64>, tensor<i64>) -> tensor<9x3xi64>
// CHECK: aten.add %[[SCALED]], %[[PAD]]
// CHECK: aten.sort %{{.+}} {descending = false, dim = 1 : i64} : (tensor<9x3xi64>)
// CHECK: aten.sort %{{.+}} {descending = false, dim = 1 : i64} : (tensor<5x3xi64>)
// CHECK: aten.sort %{{.+}} {descending = false, dim = 1 : i64} : (tensor<3x3xi64>)
// CHECK: aten.sort %{{.+}} {descending = false, dim = 1 : i64} : (tensor<2x3xi64>)
// CHECK: %[[KEY:.+]] = aten.view %{{.+}} : (tensor<1x3xi64>) -> tensor<3xi64>
// CHECK: %{{.+}}, %[[ORDER:.+]] = aten.sort %[[KEY]] {descending = false, dim = 0 : i64}
// CHECK-NOT: aten.sort
// CHECK: aten.index_select %{{.+}}, %[[ORDER]] {dim = 0 : i64} : (tensor<3x17xf32>, tensor<3xi64>) -> tensor<3x17xf32>
// CHECK: return
func.func @unique_dim_long_rows(%x: tensor<3x17xf32>) -> (tensor<?x17xf32>, tensor<3xi64>, tensor<?xi64>) {
  %v, %i, %c = aten.unique_dim %x {dim = 0 : i64} : (tensor<3x17xf32>) -> (tensor<?x17xf32>, tensor<3xi64>, tensor<?xi64>)
  return %v, %i, %c : tensor<?x17xf32>, tensor<3xi64>, tensor<?xi64>
}
