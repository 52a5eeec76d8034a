// RUN: ember-opt %s --ember-lower-to-linalg-cpu | filecheck %s
// RUN: ember-opt %s --ember-lower-to-linalg | filecheck %s --check-prefix=PLAIN

// Targets other than CPUs read element by element (IREE's Vulkan backend cannot compile
// iree_linalg_ext.gather).
// PLAIN-NOT: iree_linalg_ext.gather

// A gather of rows along the leading axis copies whole rows (iree_linalg_ext.gather of the
// rows viewed as (length / k, k), k their length's largest divisor that is a multiple of 8
// from 16 to 64 below the length, else 8; positions normalized and clamped first), read
// through a select on a barrier'd condition that roots the dispatch (so IREE fuses the positions into
// it). It must not fire for short rows (here 8 elements), rows no such k divides (1018: a
// whole row's view broke a scatter fused after the gather), or another axis: those read
// element by element.
// CHECK-LABEL: func.func @row_gather
// CHECK: arith.minsi
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0, 1, 2]] : tensor<10x4x8xf32> into tensor<320xf32>
// CHECK: iree_linalg_ext.gather dimension_map = [0] ins({{.*}} : tensor<10x2x16xf32>, tensor<6xi64>) outs({{.*}} : tensor<6x2x16xf32>)
// CHECK: tensor.expand_shape {{.*}} into tensor<2x3x4x8xf32>
// CHECK: util.optimization_barrier %{{.*}} : i1
// CHECK: arith.select
// CHECK-NOT: tensor.extract %
// CHECK-LABEL: func.func @row_views
// CHECK: iree_linalg_ext.gather {{.*}} ins({{.*}} : tensor<3x25x40xf32>, tensor<2xi64>)
// CHECK: iree_linalg_ext.gather {{.*}} ins({{.*}} : tensor<3x127x8xf32>, tensor<2xi64>)
// CHECK-NOT: iree_linalg_ext.gather
// CHECK: tensor.extract %arg2
// CHECK-LABEL: func.func @element_gathers
// CHECK-NOT: iree_linalg_ext.gather
// CHECK: tensor.extract %arg0
// CHECK-NOT: iree_linalg_ext.gather
// CHECK: tensor.extract %arg2
// CHECK-NOT: iree_linalg_ext.gather
func.func @row_gather(%x: tensor<10x4x8xf32>, %i: tensor<2x3xi32>) -> tensor<2x3x4x8xf32> {
  %0 = "ember.take"(%x, %i) {axis = 0 : i64} : (tensor<10x4x8xf32>, tensor<2x3xi32>) -> tensor<2x3x4x8xf32>
  return %0 : tensor<2x3x4x8xf32>
}
func.func @row_views(%x: tensor<3x1000xf32>, %y: tensor<3x1016xf32>, %z: tensor<3x1018xf32>, %i: tensor<2xi32>) -> (tensor<2x1000xf32>, tensor<2x1016xf32>, tensor<2x1018xf32>) {
  %0 = "ember.take"(%x, %i) {axis = 0 : i64} : (tensor<3x1000xf32>, tensor<2xi32>) -> tensor<2x1000xf32>
  %1 = "ember.take"(%y, %i) {axis = 0 : i64} : (tensor<3x1016xf32>, tensor<2xi32>) -> tensor<2x1016xf32>
  %2 = "ember.take"(%z, %i) {axis = 0 : i64} : (tensor<3x1018xf32>, tensor<2xi32>) -> tensor<2x1018xf32>
  return %0, %1, %2 : tensor<2x1000xf32>, tensor<2x1016xf32>, tensor<2x1018xf32>
}
func.func @element_gathers(%x: tensor<10x8xf32>, %i: tensor<3xi32>, %y: tensor<4x40xf32>) -> (tensor<3x8xf32>, tensor<4x3xf32>) {
  %0 = "ember.take"(%x, %i) {axis = 0 : i64} : (tensor<10x8xf32>, tensor<3xi32>) -> tensor<3x8xf32>
  %1 = "ember.take"(%y, %i) {axis = 1 : i64} : (tensor<4x40xf32>, tensor<3xi32>) -> tensor<4x3xf32>
  return %0, %1 : tensor<3x8xf32>, tensor<4x3xf32>
}

// A reversal along dims before the last copies whole rows in mirrored order: each row's number
// from its coordinates (here (3 - i) * 5 + (4 - j) for the 4x5 rows of 16). A reversed last dim
// reads element by element.
// CHECK-LABEL: func.func @mirrored_rows
// CHECK: linalg.generic
// CHECK: arith.subi
// CHECK: arith.muli
// CHECK: arith.subi
// CHECK: arith.addi
// CHECK: iree_linalg_ext.gather {{.*}}ins({{.*}} : tensor<20x2x8xf32>, tensor<20xi64>)
// CHECK-LABEL: func.func @mirrored_elements
// CHECK-NOT: iree_linalg_ext.gather
// CHECK: tensor.extract %arg0
func.func @mirrored_rows(%x: tensor<4x5x16xf32>) -> tensor<4x5x16xf32> {
  %0 = "ember.rev"(%x) {dimensions = array<i64: 0, 1>} : (tensor<4x5x16xf32>) -> tensor<4x5x16xf32>
  return %0 : tensor<4x5x16xf32>
}
func.func @mirrored_elements(%x: tensor<4x5x16xf32>) -> tensor<4x5x16xf32> {
  %0 = "ember.rev"(%x) {dimensions = array<i64: 0, 2>} : (tensor<4x5x16xf32>) -> tensor<4x5x16xf32>
  return %0 : tensor<4x5x16xf32>
}
