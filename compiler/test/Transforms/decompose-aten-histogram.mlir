// RUN: kiln-opt %s -kiln-decompose-aten | FileCheck %s

// A bin count over a given range: the edges are eager's linspace, the
// first half counted up from lo and the rest down from hi in the element
// type; each element's bin is eager's guess trunc((x - lo) * bins / (hi -
// lo)), settled by the edges guess - 1 .. guess + 1; elements outside the
// edges go to an extra counter that the slice drops.
// CHECK-LABEL: func @histogram_range
// CHECK: %[[X:.+]] = aten.view %{{.+}} : (tensor<2x5xf32>) -> tensor<10xf32>
// CHECK: %[[LO:.+]] = aten.constant dense<-1.000000e+00> : tensor<f32>
// CHECK: %[[HI:.+]] = aten.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[SPAN:.+]] = aten.sub %[[HI]], %[[LO]]
// CHECK: %[[STEP:.+]] = aten.div %[[SPAN]], %{{.+}}
// CHECK: %[[I:.+]] = aten.pointwise "copy" %{{.+}} : (tensor<5xi64>) -> tensor<5xf32>
// CHECK: %[[BACK:.+]] = aten.sub %{{.+}}, %[[I]]
// CHECK: %[[HALF:.+]] = aten.constant dense<2.000000e+00> : tensor<f32>
// CHECK: %[[FIRST:.+]] = aten.pointwise "lt" %[[I]], %[[HALF]]
// CHECK: %[[UPS:.+]] = aten.mul %[[STEP]], %[[I]]
// CHECK: %[[UP:.+]] = aten.add %[[LO]], %[[UPS]]
// CHECK: %[[DOWNS:.+]] = aten.mul %[[STEP]], %[[BACK]]
// CHECK: %[[DOWN:.+]] = aten.sub %[[HI]], %[[DOWNS]]
// CHECK: %[[EDGES:.+]] = aten.pointwise "where" %[[FIRST]], %[[UP]], %[[DOWN]] : (tensor<5xi1>, tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
// CHECK: %[[GUESS:.+]] = aten.div %{{.+}}, %{{.+}} : (tensor<10xf32>, tensor<f32>) -> tensor<10xf32>
// A guess rounded past bins at x = hi is still converted (truncation takes
// it to bins, as eager's); NaN and the rest are not.
// CHECK: %[[PAST:.+]] = aten.constant dense<5.000000e+00> : tensor<f32>
// CHECK: aten.pointwise "lt" %[[GUESS]], %[[PAST]]
// CHECK: %[[SAFE:.+]] = aten.pointwise "where" %{{.+}}, %[[GUESS]], %{{.+}}
// CHECK: %[[G:.+]] = aten.pointwise "copy" %[[SAFE]] : (tensor<10xf32>) -> tensor<10xi64>
// The three edges beside the guess, each counted where it exists and is
// at most x.
// CHECK-COUNT-3: aten.index_select %[[EDGES]], %{{.+}} {dim = 0 : i64} : (tensor<5xf32>, tensor<10xi64>) -> tensor<10xf32>
// CHECK: %[[LAST:.+]] = aten.constant dense<3> : tensor<i64>
// CHECK: %[[CLOSED:.+]] = aten.pointwise "minimum" %{{.+}}, %[[LAST]]
// CHECK: %[[OUT:.+]] = aten.constant dense<4> : tensor<i64>
// CHECK: %[[INDEX:.+]] = aten.pointwise "where" %{{.+}}, %[[CLOSED]], %[[OUT]]
// CHECK: %[[ONES:.+]] = aten.constant dense<1.000000e+00> : tensor<10xf32>
// CHECK: %[[ZEROS:.+]] = aten.constant dense<0.000000e+00> : tensor<5xf32>
// CHECK: %[[COUNTS:.+]] = aten.scatter %[[ZEROS]], %[[INDEX]], %[[ONES]] {dim = 0 : i64, reduce = "sum"}
// CHECK: %[[H:.+]] = aten.slice %[[COUNTS]] {offsets = array<i64: 0>, strides = array<i64: 1>} : (tensor<5xf32>) -> tensor<4xf32>
// CHECK: return %[[H]], %[[EDGES]]
// CHECK-NOT: aten.histogram
func.func @histogram_range(%x: tensor<2x5xf32>) -> (tensor<4xf32>, tensor<5xf32>) {
  %h, %e = aten.histogram %x {range = array<f64: -1.0, 1.0>} : (tensor<2x5xf32>) -> (tensor<4xf32>, tensor<5xf32>)
  return %h, %e : tensor<4xf32>, tensor<5xf32>
}

// No range: the data's minimum and maximum, widened by 1/2 where equal.
// CHECK-LABEL: func @histogram_data
// CHECK: %[[MIN:.+]] = aten.amin %[[X:.+]] {dims = array<i64: 0>} : (tensor<6xf64>) -> tensor<f64>
// CHECK: %[[MAX:.+]] = aten.amax %[[X]] {dims = array<i64: 0>} : (tensor<6xf64>) -> tensor<f64>
// CHECK: %[[EQ:.+]] = aten.pointwise "eq" %[[MIN]], %[[MAX]]
// CHECK: %[[HALF:.+]] = aten.constant dense<5.000000e-01> : tensor<f64>
// CHECK: %[[DOWN:.+]] = aten.sub %[[MIN]], %[[HALF]]
// CHECK: aten.pointwise "where" %[[EQ]], %[[DOWN]], %[[MIN]]
// CHECK: %[[UP:.+]] = aten.add %[[MAX]], %[[HALF]]
// CHECK: aten.pointwise "where" %[[EQ]], %[[UP]], %[[MAX]]
// CHECK: aten.scatter
func.func @histogram_data(%x: tensor<6xf64>) -> (tensor<3xf64>, tensor<4xf64>) {
  %h, %e = aten.histogram %x : (tensor<6xf64>) -> (tensor<3xf64>, tensor<4xf64>)
  return %h, %e : tensor<3xf64>, tensor<4xf64>
}

// Given edges: the upper bound among them (a count of the edges not above
// x), less one; weights added instead of ones; density divides by the
// total, then by each bin's width.
// CHECK-LABEL: func @histogram_edges
// CHECK-SAME: (%[[X:[^:]+]]: tensor<6xf64>, %[[E:[^:]+]]: tensor<4xf64>, %[[W:[^:]+]]: tensor<6xf64>)
// CHECK: %[[GT:.+]] = aten.pointwise "gt" %{{.+}}, %{{.+}} : (tensor<1x4xf64>, tensor<6x1xf64>) -> tensor<6x4xi1>
// CHECK: %[[UB:.+]] = aten.sum %{{.+}} {dims = array<i64: 1>} : (tensor<6x4xi64>) -> tensor<6xi64>
// CHECK: %[[BIN:.+]] = aten.sub %[[UB]], %{{.+}}
// CHECK: %[[INDEX:.+]] = aten.pointwise "where" %{{.+}}, %{{.+}}, %{{.+}} : (tensor<6xi1>, tensor<6xi64>, tensor<i64>) -> tensor<6xi64>
// CHECK: %[[COUNTS:.+]] = aten.scatter %{{.+}}, %[[INDEX]], %[[W]] {dim = 0 : i64, reduce = "sum"}
// CHECK: %[[H:.+]] = aten.slice %[[COUNTS]] {{.+}} -> tensor<3xf64>
// CHECK: %[[TOTAL:.+]] = aten.sum %[[H]] {dims = array<i64: 0>} : (tensor<3xf64>) -> tensor<f64>
// CHECK: %[[SHARE:.+]] = aten.div %[[H]], %[[TOTAL]]
// CHECK: %[[RIGHT:.+]] = aten.slice %[[E]] {offsets = array<i64: 1>, strides = array<i64: 1>} : (tensor<4xf64>) -> tensor<3xf64>
// CHECK: %[[LEFT:.+]] = aten.slice %[[E]] {offsets = array<i64: 0>, strides = array<i64: 1>} : (tensor<4xf64>) -> tensor<3xf64>
// CHECK: %[[WIDTH:.+]] = aten.sub %[[RIGHT]], %[[LEFT]]
// CHECK: %[[D:.+]] = aten.div %[[SHARE]], %[[WIDTH]]
// CHECK: return %[[D]], %[[E]]
func.func @histogram_edges(%x: tensor<6xf64>, %e: tensor<4xf64>, %w: tensor<6xf64>) -> (tensor<3xf64>, tensor<4xf64>) {
  %h, %o = aten.histogram %x edges %e weight %w {density} : (tensor<6xf64>, tensor<4xf64>, tensor<6xf64>) -> (tensor<3xf64>, tensor<4xf64>)
  return %h, %o : tensor<3xf64>, tensor<4xf64>
}

// No elements: zero counts, and the edges over [0, 1].
// CHECK-LABEL: func @histogram_empty
// CHECK: %[[LO:.+]] = aten.constant dense<0.000000e+00> : tensor<f32>
// CHECK: %[[HI:.+]] = aten.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[EDGES:.+]] = aten.pointwise "where"
// CHECK: %[[Z:.+]] = aten.constant dense<0.000000e+00> : tensor<2xf32>
// CHECK-NOT: aten.scatter
// CHECK: return %[[Z]], %[[EDGES]]
func.func @histogram_empty(%x: tensor<0x3xf32>) -> (tensor<2xf32>, tensor<3xf32>) {
  %h, %e = aten.histogram %x : (tensor<0x3xf32>) -> (tensor<2xf32>, tensor<3xf32>)
  return %h, %e : tensor<2xf32>, tensor<3xf32>
}

// histogramdd: each coordinate (a column) gets histogram's edges and bins;
// a point's cell is bin0 * 2 + bin1 (row-major over the 3x2 cells), sent
// to the 7th counter (dropped) when it lies outside the edges along any
// coordinate; one scatter-add of the weights; densities divide by the
// total, then by the widths along dim 0 (3x1), then along dim 1 (1x2).
// CHECK-LABEL: func @histogramdd
// CHECK: aten.slice %arg0 {offsets = array<i64: 0, 0>, strides = array<i64: 1, 1>} : (tensor<5x2xf32>) -> tensor<5x1xf32>
// CHECK: %[[OFFSET0:.+]] = aten.mul %{{.+}}, %{{.+}} : (tensor<5xi64>, tensor<i64>) -> tensor<5xi64>
// CHECK-NEXT: aten.slice %arg0 {offsets = array<i64: 0, 1>, strides = array<i64: 1, 1>} : (tensor<5x2xf32>) -> tensor<5x1xf32>
// CHECK: %[[OFFSET1:.+]] = aten.mul %{{.+}}, %{{.+}} : (tensor<5xi64>, tensor<i64>) -> tensor<5xi64>
// CHECK: %[[CELL:.+]] = aten.add %[[OFFSET0]], %[[OFFSET1]] : (tensor<5xi64>, tensor<5xi64>) -> tensor<5xi64>
// CHECK: %[[INSIDE:.+]] = aten.pointwise "logical_and" %{{.+}}, %{{.+}} : (tensor<5xi1>, tensor<5xi1>) -> tensor<5xi1>
// CHECK: %[[NOWHERE:.+]] = aten.constant dense<6> : tensor<i64>
// CHECK: %[[SLOT:.+]] = aten.pointwise "where" %[[INSIDE]], %[[CELL]], %[[NOWHERE]]
// CHECK: %[[SUMS:.+]] = aten.scatter %{{.+}}, %[[SLOT]], %arg1 {dim = 0 : i64, reduce = "sum"} : (tensor<7xf32>, tensor<5xi64>, tensor<5xf32>) -> tensor<7xf32>
// CHECK: %[[CELLS:.+]] = aten.slice %[[SUMS]] {{.+}} -> tensor<6xf32>
// CHECK: %[[HIST:.+]] = aten.view %[[CELLS]] : (tensor<6xf32>) -> tensor<3x2xf32>
// CHECK: %[[TOTAL:.+]] = aten.sum %[[HIST]] {dims = array<i64: 0, 1>} : (tensor<3x2xf32>) -> tensor<f32>
// CHECK: %[[SHARE:.+]] = aten.div %[[HIST]], %[[TOTAL]]
// CHECK: %[[W0:.+]] = aten.view %{{.+}} : (tensor<3xf32>) -> tensor<3x1xf32>
// CHECK: %[[BY0:.+]] = aten.div %[[SHARE]], %[[W0]] : (tensor<3x2xf32>, tensor<3x1xf32>) -> tensor<3x2xf32>
// CHECK: %[[W1:.+]] = aten.view %{{.+}} : (tensor<2xf32>) -> tensor<1x2xf32>
// CHECK: %[[DENSITY:.+]] = aten.div %[[BY0]], %[[W1]] : (tensor<3x2xf32>, tensor<1x2xf32>) -> tensor<3x2xf32>
// CHECK: return %[[DENSITY]]
func.func @histogramdd(%x: tensor<5x2xf32>, %w: tensor<5xf32>) -> (tensor<3x2xf32>, tensor<4xf32>, tensor<3xf32>) {
  %h, %e0, %e1 = aten.histogramdd %x weight %w {density} : (tensor<5x2xf32>, tensor<5xf32>) -> (tensor<3x2xf32>, tensor<4xf32>, tensor<3xf32>)
  return %h, %e0, %e1 : tensor<3x2xf32>, tensor<4xf32>, tensor<3xf32>
}
