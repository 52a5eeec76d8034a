// RUN: ember-opt %s --ember-lower-to-linalg-cpu | filecheck %s
// RUN: ember-opt %s --ember-lower-to-linalg | filecheck %s --check-prefix=PLAIN

// Targets other than CPUs read element by element (IREE's Vulkan backend cannot compile
// iree_linalg_ext.gather).
// PLAIN-NOT: iree_linalg_ext.gather

// A gather of rows along the leading axis copies whole rows (iree_linalg_ext.gather;
// positions normalized and clamped first), read through a select on a barrier'd condition
// that roots the dispatch (so IREE fuses the positions into it). Float and integer rows of
// at most 8192 elements are gathered whole with a compilation_info: 8192 elements of rows a
// workgroup, 64 bytes a step (here 256 rows of 32; 8 of 1000; float64 8 lanes). Longer rows
// and other element types are viewed as (length / k, k), k the length's largest divisor from
// 16 to 64, else 8, else the flat row. It must not fire for short rows (here 8 elements) or
// another axis: those read element by element.
// CHECK-DAG: #[[R256:config[0-9]*]] = #iree_cpu.lowering_config<distribution = [256, 0], vector_common_parallel = [1, 16]>
// CHECK-DAG: #[[R8:config[0-9]*]] = #iree_cpu.lowering_config<distribution = [8, 0], vector_common_parallel = [1, 16]>
// CHECK-DAG: #[[R8D:config[0-9]*]] = #iree_cpu.lowering_config<distribution = [8, 0], vector_common_parallel = [1, 8]>
// CHECK-DAG: #[[T:translation[0-9]*]] = #iree_codegen.translation_info<pipeline = #iree_cpu.pipeline<LinalgExtTileAndVectorize>>
// CHECK-DAG: #[[G256:compilation[0-9]*]] = #iree_codegen.compilation_info<lowering_config = #[[R256]], translation_info = #[[T]]>
// CHECK-DAG: #[[G8:compilation[0-9]*]] = #iree_codegen.compilation_info<lowering_config = #[[R8]], translation_info = #[[T]]>
// CHECK-DAG: #[[G8D:compilation[0-9]*]] = #iree_codegen.compilation_info<lowering_config = #[[R8D]], translation_info = #[[T]]>
// CHECK-LABEL: func.func @row_gather
// CHECK: arith.minsi
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0, 1, 2]] : tensor<10x4x8xf32> into tensor<320xf32>
// CHECK: iree_linalg_ext.gather {compilation_info = #[[G256]]} dimension_map = [0] ins({{.*}} : tensor<10x32xf32>, tensor<6xi64>) outs({{.*}} : tensor<6x32xf32>)
// CHECK: tensor.expand_shape {{.*}} into tensor<2x3x4x8xf32>
// CHECK: util.optimization_barrier %{{.*}} : i1
// CHECK: arith.select
// CHECK-NOT: tensor.extract %
// CHECK-LABEL: func.func @row_views
// CHECK: iree_linalg_ext.gather {compilation_info = #[[G8]]} dimension_map = [0] ins({{.*}} : tensor<3x1000xf32>, tensor<2xi64>)
// CHECK: iree_linalg_ext.gather {compilation_info = #[[G8D]]} dimension_map = [0] ins({{.*}} : tensor<3x1000xf64>, tensor<2xi64>)
// CHECK: iree_linalg_ext.gather dimension_map = [0] ins({{.*}} : tensor<3x200x50xf32>, tensor<2xi64>)
// CHECK: iree_linalg_ext.gather dimension_map = [0] ins({{.*}} : tensor<3x127x8xi1>, tensor<2xi64>)
// CHECK: iree_linalg_ext.gather dimension_map = [0] ins({{.*}} : tensor<3x1018xi1>, tensor<2xi64>)
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
func.func @row_views(%x: tensor<3x1000xf32>, %y: tensor<3x1000xf64>, %z: tensor<3x10000xf32>, %u: tensor<3x1016xi1>, %v: tensor<3x1018xi1>, %i: tensor<2xi32>) -> (tensor<2x1000xf32>, tensor<2x1000xf64>, tensor<2x10000xf32>, tensor<2x1016xi1>, tensor<2x1018xi1>) {
  %0 = "ember.take"(%x, %i) {axis = 0 : i64} : (tensor<3x1000xf32>, tensor<2xi32>) -> tensor<2x1000xf32>
  %1 = "ember.take"(%y, %i) {axis = 0 : i64} : (tensor<3x1000xf64>, tensor<2xi32>) -> tensor<2x1000xf64>
  %2 = "ember.take"(%z, %i) {axis = 0 : i64} : (tensor<3x10000xf32>, tensor<2xi32>) -> tensor<2x10000xf32>
  %3 = "ember.take"(%u, %i) {axis = 0 : i64} : (tensor<3x1016xi1>, tensor<2xi32>) -> tensor<2x1016xi1>
  %4 = "ember.take"(%v, %i) {axis = 0 : i64} : (tensor<3x1018xi1>, tensor<2xi32>) -> tensor<2x1018xi1>
  return %0, %1, %2, %3, %4 : tensor<2x1000xf32>, tensor<2x1000xf64>, tensor<2x10000xf32>, tensor<2x1016xi1>, tensor<2x1018xi1>
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
// CHECK: iree_linalg_ext.gather {{.*}}ins({{.*}} : tensor<20x16xf32>, tensor<20xi64>)
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
