// RUN: kiln-opt %s -split-input-file -kiln-decompose-aten | FileCheck %s

// topk: a stable sort along the dim, descending when largest, and the first
// k of its values and indices.
// CHECK-LABEL: func @topk
// CHECK-NOT: aten.topk
// CHECK: %[[V:.+]], %[[I:.+]] = aten.sort %arg0 {descending = true, dim = 0 : i64} : (tensor<6x4xf32>) -> (tensor<6x4xf32>, tensor<6x4xi64>)
// CHECK: %[[TV:.+]] = aten.slice %[[V]] {offsets = array<i64: 0, 0>, strides = array<i64: 1, 1>} : (tensor<6x4xf32>) -> tensor<2x4xf32>
// CHECK: %[[TI:.+]] = aten.slice %[[I]] {{.+}} : (tensor<6x4xi64>) -> tensor<2x4xi64>
// CHECK: return %[[TV]], %[[TI]]
func.func @topk(%x: tensor<6x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xi64>) {
  %v, %i = aten.topk %x {k = 2 : i64, dim = 0 : i64, largest = true} : (tensor<6x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xi64>)
  return %v, %i : tensor<2x4xf32>, tensor<2x4xi64>
}

// -----

// kthvalue: entry k - 1 of an ascending sort, viewed without the dim.
// CHECK-LABEL: func @kthvalue
// CHECK: %[[V:.+]], %[[I:.+]] = aten.sort %arg0 {descending = false, dim = 1 : i64}
// CHECK: %[[PV:.+]] = aten.slice %[[V]] {offsets = array<i64: 0, 2>, strides = array<i64: 1, 1>} : (tensor<3x7xi32>) -> tensor<3x1xi32>
// CHECK: %[[PI:.+]] = aten.slice %[[I]] {offsets = array<i64: 0, 2>, {{.+}}} : (tensor<3x7xi64>) -> tensor<3x1xi64>
// CHECK: aten.view %[[PV]] : (tensor<3x1xi32>) -> tensor<3xi32>
// CHECK: aten.view %[[PI]] : (tensor<3x1xi64>) -> tensor<3xi64>
func.func @kthvalue(%x: tensor<3x7xi32>) -> (tensor<3xi32>, tensor<3xi64>) {
  %v, %i = aten.kthvalue %x {k = 3 : i64, dim = 1 : i64, keepdim = false} : (tensor<3x7xi32>) -> (tensor<3xi32>, tensor<3xi64>)
  return %v, %i : tensor<3xi32>, tensor<3xi64>
}

// -----

// A 0-d topk is its own sort: nothing to cut.
// CHECK-LABEL: func @topk_0d
// CHECK: %[[V:.+]], %[[I:.+]] = aten.sort %arg0 {descending = true, dim = 0 : i64} : (tensor<i64>) -> (tensor<i64>, tensor<i64>)
// CHECK-NEXT: return %[[V]], %[[I]]
func.func @topk_0d(%x: tensor<i64>) -> (tensor<i64>, tensor<i64>) {
  %v, %i = aten.topk %x {k = 1 : i64, dim = 0 : i64, largest = true} : (tensor<i64>) -> (tensor<i64>, tensor<i64>)
  return %v, %i : tensor<i64>, tensor<i64>
}

// -----

// median: an ascending sort; each row's position is its first NaN
// (extent - NaN count: the sort puts NaNs last, in order) when it has
// one, else (n - 1) / 2; values and indices gathered there.
// CHECK-LABEL: func @median
// CHECK-NOT: aten.median
// CHECK: %[[V:.+]], %[[I:.+]] = aten.sort %arg0 {descending = false, dim = 1 : i64}
// CHECK: %[[NAN:.+]] = aten.pointwise "isnan" %arg0
// CHECK: %[[COUNT:.+]] = aten.pointwise "copy" %[[NAN]] : (tensor<3x6xi1>) -> tensor<3x6xi64>
// CHECK: %[[SUM:.+]] = aten.sum %[[COUNT]] {dims = array<i64: 1>}
// CHECK: %[[NANS:.+]] = aten.view %[[SUM]] : (tensor<3xi64>) -> tensor<3x1xi64>
// CHECK-DAG: %[[ZERO:.+]] = aten.constant dense<0> : tensor<i64>
// CHECK-DAG: %[[SIX:.+]] = aten.constant dense<6> : tensor<i64>
// CHECK: %[[FIRST:.+]] = aten.sub %[[SIX]], %[[NANS]]
// CHECK: %[[HAS:.+]] = aten.pointwise "gt" %[[NANS]], %[[ZERO]]
// CHECK: %[[MIDDLE:.+]] = aten.constant dense<2> : tensor<i64>
// CHECK: %[[AT:.+]] = aten.pointwise "where" %[[HAS]], %[[FIRST]], %[[MIDDLE]]
// CHECK: %[[GV:.+]] = aten.gather %[[V]], %[[AT]] {dim = 1 : i64} : (tensor<3x6xf32>, tensor<3x1xi64>) -> tensor<3x1xf32>
// CHECK: %[[GI:.+]] = aten.gather %[[I]], %[[AT]] {dim = 1 : i64}
// CHECK: aten.view %[[GV]] : (tensor<3x1xf32>) -> tensor<3xf32>
// CHECK: aten.view %[[GI]] : (tensor<3x1xi64>) -> tensor<3xi64>
func.func @median(%x: tensor<3x6xf32>) -> (tensor<3xf32>, tensor<3xi64>) {
  %v, %i = aten.median %x {dim = 1 : i64, keepdim = false, ignore_nan = false} : (tensor<3x6xf32>) -> (tensor<3xf32>, tensor<3xi64>)
  return %v, %i : tensor<3xf32>, tensor<3xi64>
}

// -----

// nanmedian: (m - 1) / 2 of the m entries that are not NaN (0 for a row
// of NaNs: its first), kept dim.
// CHECK-LABEL: func @nanmedian
// CHECK: aten.sort %arg0 {descending = false, dim = 0 : i64}
// CHECK: %[[COUNTED:.+]] = aten.sub %{{.+}}, %{{.+}} : (tensor<i64>, tensor<1x6xi64>) -> tensor<1x6xi64>
// CHECK: %[[LAST:.+]] = aten.sub %[[COUNTED]], %{{.+}} : (tensor<1x6xi64>, tensor<i64>) -> tensor<1x6xi64>
// CHECK: %[[CLAMPED:.+]] = aten.pointwise "maximum" %[[LAST]]
// CHECK: %[[AT:.+]] = aten.pointwise "div_floor" %[[CLAMPED]]
// CHECK: aten.gather %{{.+}}, %[[AT]] {dim = 0 : i64} : (tensor<3x6xf32>, tensor<1x6xi64>) -> tensor<1x6xf32>
// CHECK-NOT: aten.view
func.func @nanmedian(%x: tensor<3x6xf32>) -> (tensor<1x6xf32>, tensor<1x6xi64>) {
  %v, %i = aten.median %x {dim = 0 : i64, keepdim = true, ignore_nan = true} : (tensor<3x6xf32>) -> (tensor<1x6xf32>, tensor<1x6xi64>)
  return %v, %i : tensor<1x6xf32>, tensor<1x6xi64>
}

// -----

// Integers have no NaN: the middle entry of the sort, sliced.
// CHECK-LABEL: func @median_int
// CHECK: %[[V:.+]], %[[I:.+]] = aten.sort %arg0
// CHECK-NOT: isnan
// CHECK: aten.slice %[[V]] {offsets = array<i64: 0, 2>, strides = array<i64: 1, 1>} : (tensor<3x6xi32>) -> tensor<3x1xi32>
// CHECK: aten.slice %[[I]] {offsets = array<i64: 0, 2>, {{.+}}} : (tensor<3x6xi64>) -> tensor<3x1xi64>
func.func @median_int(%x: tensor<3x6xi32>) -> (tensor<3xi32>, tensor<3xi64>) {
  %v, %i = aten.median %x {dim = 1 : i64, keepdim = false, ignore_nan = false} : (tensor<3x6xi32>) -> (tensor<3xi32>, tensor<3xi64>)
  return %v, %i : tensor<3xi32>, tensor<3xi64>
}

// -----

// mode along dim 0 of a 5x3 tensor, keepdim: the dim moves last, a stable
// sort, each entry's run width from its lower and upper bounds in its own
// row (aten.searchsorted, decomposed in the same pass: !(b >= v) and
// !(b > v) counted), the first largest width (where the run starts), the
// value there and the index at the run's end (its last occurrence).
// CHECK-LABEL: func @mode_dim0
// CHECK-NOT: aten.mode
// CHECK: %[[ROWS:.+]] = aten.permute %arg0 {dims = array<i64: 1, 0>} : (tensor<5x3xf32>) -> tensor<3x5xf32>
// CHECK: %[[S:.+]], %[[P:.+]] = aten.sort %[[ROWS]] {descending = false, dim = 1 : i64}
// CHECK: aten.pointwise "ge"
// CHECK: %[[LO:.+]] = aten.sum %{{.+}} {dims = array<i64: 2>} : (tensor<3x5x5xi64>) -> tensor<3x5xi64>
// CHECK: aten.pointwise "gt"
// CHECK: %[[HI:.+]] = aten.sum %{{.+}} {dims = array<i64: 2>} : (tensor<3x5x5xi64>) -> tensor<3x5xi64>
// CHECK: %[[N:.+]] = aten.sub %[[HI]], %[[LO]]
// CHECK: %[[BEST:.+]] = aten.arg_reduce %[[N]] {dim = 1 : i64, keepdim = true, max = true} : (tensor<3x5xi64>) -> tensor<3x1xi64>
// CHECK: %[[V:.+]] = aten.gather %[[S]], %[[BEST]] {dim = 1 : i64} : (tensor<3x5xf32>, tensor<3x1xi64>) -> tensor<3x1xf32>
// CHECK: %[[W:.+]] = aten.gather %[[N]], %[[BEST]] {dim = 1 : i64}
// CHECK: %[[W1:.+]] = aten.pointwise "maximum" %[[W]], %{{.+}}
// CHECK: %[[END:.+]] = aten.add %[[BEST]], %[[W1]]
// CHECK: %[[LAST:.+]] = aten.sub %[[END]], %{{.+}}
// CHECK: %[[I:.+]] = aten.gather %[[P]], %[[LAST]] {dim = 1 : i64} : (tensor<3x5xi64>, tensor<3x1xi64>) -> tensor<3x1xi64>
// CHECK: %[[VV:.+]] = aten.view %[[V]] : (tensor<3x1xf32>) -> tensor<1x3xf32>
// CHECK: %[[IV:.+]] = aten.view %[[I]] : (tensor<3x1xi64>) -> tensor<1x3xi64>
// CHECK: return %[[VV]], %[[IV]]
func.func @mode_dim0(%x: tensor<5x3xf32>) -> (tensor<1x3xf32>, tensor<1x3xi64>) {
  %v, %i = aten.mode %x {dim = 0 : i64, keepdim = true} : (tensor<5x3xf32>) -> (tensor<1x3xf32>, tensor<1x3xi64>)
  return %v, %i : tensor<1x3xf32>, tensor<1x3xi64>
}

// -----

// A 0-d mode is the value itself, at index 0.
// CHECK-LABEL: func @mode_scalar
// CHECK-NOT: aten.sort
// CHECK: %[[Z:.+]] = aten.constant dense<0> : tensor<i64>
// CHECK: return %arg0, %[[Z]]
func.func @mode_scalar(%x: tensor<i32>) -> (tensor<i32>, tensor<i64>) {
  %v, %i = aten.mode %x {dim = 0 : i64, keepdim = false} : (tensor<i32>) -> (tensor<i32>, tensor<i64>)
  return %v, %i : tensor<i32>, tensor<i64>
}
