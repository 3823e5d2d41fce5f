// RUN: kiln-opt %s -kiln-decompose-aten | FileCheck %s

// A given range: each element's bin is trunc((x - min) * bins / (max - min))
// in the element type, the last bin closed at max; elements outside the
// range go to an extra counter that the slice drops.
// CHECK-LABEL: func @histc_range
// CHECK: %[[X:.+]] = aten.view %{{.+}} : (tensor<2x5xf32>) -> tensor<10xf32>
// CHECK: %[[LO:.+]] = aten.constant dense<-1.000000e+00> : tensor<f32>
// CHECK: %[[HI:.+]] = aten.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[GE:.+]] = aten.pointwise "ge" %[[X]], %[[LO]]
// CHECK: %[[LE:.+]] = aten.pointwise "le" %[[X]], %[[HI]]
// CHECK: %[[IN:.+]] = aten.pointwise "logical_and" %[[GE]], %[[LE]]
// CHECK: %[[OFF:.+]] = aten.sub %[[X]], %[[LO]]
// CHECK: %[[BINS:.+]] = aten.constant dense<4.000000e+00> : tensor<f32>
// CHECK: %[[MUL:.+]] = aten.mul %[[OFF]], %[[BINS]]
// CHECK: %[[WIDTH:.+]] = aten.sub %[[HI]], %[[LO]]
// CHECK: %[[POS:.+]] = aten.div %[[MUL]], %[[WIDTH]]
// A bin that is NaN or outside [0, bins + 1) (an overflow, an empty range
// in the element type) counts nowhere: the conversion never sees it. At x
// = max the quotient may round past bins; truncated, it is the last bin.
// CHECK: %[[POSGE:.+]] = aten.pointwise "ge" %[[POS]], %{{.+}}
// CHECK: %[[PAST:.+]] = aten.constant dense<5.000000e+00> : tensor<f32>
// CHECK: %[[POSLE:.+]] = aten.pointwise "lt" %[[POS]], %[[PAST]]
// CHECK: %[[BOUNDED:.+]] = aten.pointwise "logical_and" %[[POSGE]], %[[POSLE]]
// CHECK: %[[SAFE:.+]] = aten.pointwise "where" %[[BOUNDED]], %[[POS]], %{{.+}}
// CHECK: %[[BIN:.+]] = aten.pointwise "copy" %[[SAFE]] : (tensor<10xf32>) -> tensor<10xi64>
// CHECK: %[[VALID:.+]] = aten.pointwise "logical_and" %[[IN]], %[[BOUNDED]]
// CHECK: %[[LAST:.+]] = aten.constant dense<3> : tensor<i64>
// CHECK: %[[CLOSED:.+]] = aten.pointwise "minimum" %[[BIN]], %[[LAST]]
// CHECK: %[[OUT:.+]] = aten.constant dense<4> : tensor<i64>
// CHECK: %[[INDEX:.+]] = aten.pointwise "where" %[[VALID]], %[[CLOSED]], %[[OUT]]
// CHECK: %[[ONES:.+]] = aten.constant dense<1.000000e+00> : tensor<10xf32>
// CHECK: %[[ZEROS:.+]] = aten.constant dense<0.000000e+00> : tensor<5xf32>
// CHECK: %[[COUNTS:.+]] = aten.scatter %[[ZEROS]], %[[INDEX]], %[[ONES]] {dim = 0 : i64, reduce = "sum"}
// CHECK: %[[H:.+]] = aten.slice %[[COUNTS]] {offsets = array<i64: 0>, strides = array<i64: 1>} : (tensor<5xf32>) -> tensor<4xf32>
// CHECK: return %[[H]]
// CHECK-NOT: aten.histc
func.func @histc_range(%x: tensor<2x5xf32>) -> tensor<4xf32> {
  %h = aten.histc %x {bins = 4 : i64, min = -1.0 : f64, max = 1.0 : f64} : (tensor<2x5xf32>) -> tensor<4xf32>
  return %h : tensor<4xf32>
}

// min == max: the data's own range, widened by 1 each side when its
// minimum equals its maximum.
// CHECK-LABEL: func @histc_data
// CHECK: %[[MIN:.+]] = aten.amin %[[X:.+]] {dims = array<i64: 0>} : (tensor<6xf64>) -> tensor<f64>
// CHECK: %[[MAX:.+]] = aten.amax %[[X]] {dims = array<i64: 0>} : (tensor<6xf64>) -> tensor<f64>
// CHECK: %[[EQ:.+]] = aten.pointwise "eq" %[[MIN]], %[[MAX]]
// CHECK: %[[DOWN:.+]] = aten.sub %[[MIN]], %{{.+}}
// CHECK: %[[LO:.+]] = aten.pointwise "where" %[[EQ]], %[[DOWN]], %[[MIN]]
// CHECK: %[[UP:.+]] = aten.add %[[MAX]], %{{.+}}
// CHECK: %[[HI:.+]] = aten.pointwise "where" %[[EQ]], %[[UP]], %[[MAX]]
// CHECK: aten.pointwise "ge" %[[X]], %[[LO]]
// CHECK: aten.pointwise "le" %[[X]], %[[HI]]
// CHECK: aten.scatter
func.func @histc_data(%x: tensor<6xf64>) -> tensor<3xf64> {
  %h = aten.histc %x {bins = 3 : i64, min = 0.0 : f64, max = 0.0 : f64} : (tensor<6xf64>) -> tensor<3xf64>
  return %h : tensor<3xf64>
}

// No elements: zeros.
// CHECK-LABEL: func @histc_empty
// CHECK: %[[Z:.+]] = aten.constant dense<0.000000e+00> : tensor<5xf32>
// CHECK: return %[[Z]]
func.func @histc_empty(%x: tensor<0x3xf32>) -> tensor<5xf32> {
  %h = aten.histc %x {bins = 5 : i64, min = 0.0 : f64, max = 0.0 : f64} : (tensor<0x3xf32>) -> tensor<5xf32>
  return %h : tensor<5xf32>
}
