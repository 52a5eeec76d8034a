// RUN: ember-opt %s --ember-lower-to-linalg-avx512 | filecheck %s
// RUN: ember-opt %s --ember-lower-to-linalg | filecheck %s --check-prefix=PLAIN

// A float32 matrix product of 4+ tiles each way and 2^25+ multiply-adds is packed into
// 12 x 32 register tiles:
// rows zero-padded to whole tiles (100 -> 9 x 12), the right operand's columns packed
// across its rows, the blocks multiplied by linalg.mmt4d and unpacked (dropping the pad).
// The product carries its lowering config: up to 8 rows of tiles by one column a workgroup,
// leaving 8 or more workgroups (here 9 x 4 tiles: 4 rows; @transposed's 4 x 219: 8), and a
// depth of over 128 walked in blocks of 128 (here 3000; @transposed's 100 is not blocked) by
// IREE's double-tiling pipeline (its mmt4d pipeline ignores a cache level). A pack of rows
// across their depth (the left operand here, the right one of @transposed) takes one panel
// and the whole depth a workgroup; a pack that copies rows whole keeps IREE's choice.
// CHECK: #[[ROWS:.*]] = #iree_cpu.lowering_config<distribution = [1, 0], vector_common_parallel = [1, 16]>
// CHECK: #[[CONFIG:.*]] = #iree_cpu.lowering_config<cache_reduction = [0, 0, 128, 0, 0, 0], distribution = [4, 1, 0, 0, 0, 0], vector_common_parallel = [1, 1, 0, 12, 32, 0], vector_reduction = [0, 0, 1, 0, 0, 1]>
// CHECK: #[[SMALL:.*]] = #iree_cpu.lowering_config<distribution = [8, 1, 0, 0, 0, 0], vector_common_parallel = [1, 1, 0, 12, 32, 0], vector_reduction = [0, 0, 1, 0, 0, 1]>
// CHECK: #[[DATA:.*]] = #iree_codegen.translation_info<pipeline = #iree_cpu.pipeline<DataTiling>>
// CHECK: #[[PIPELINE:.*]] = #iree_codegen.translation_info<pipeline = #iree_cpu.pipeline<DoubleTilingExpert>>
// CHECK: #[[PACKINFO:.*]] = #iree_codegen.compilation_info<lowering_config = #[[ROWS]], translation_info = #[[DATA]]>
// CHECK: #[[INFO:.*]] = #iree_codegen.compilation_info<lowering_config = #[[CONFIG]], translation_info = #[[PIPELINE]]>
// CHECK-LABEL: func.func @packed
// CHECK: linalg.pack %arg0 padding_value(%{{.*}} : f32) inner_dims_pos = [0, 1] inner_tiles = [12, 1] into %{{.*}} {compilation_info = #[[PACKINFO]]} : tensor<100x3000xf32> -> tensor<9x3000x12x1xf32>
// CHECK: linalg.pack %arg1 outer_dims_perm = [1, 0] inner_dims_pos = [1, 0] inner_tiles = [32, 1] into %{{[a-z0-9_]+}} : tensor<3000x128xf32> -> tensor<4x3000x32x1xf32>
// CHECK: linalg.mmt4d {compilation_info = #[[INFO]]} ins(%{{.*}}, %{{.*}} : tensor<9x3000x12x1xf32>, tensor<4x3000x32x1xf32>) outs(%{{.*}} : tensor<9x4x12x32xf32>)
// CHECK: linalg.unpack %{{.*}} inner_dims_pos = [0, 1] inner_tiles = [12, 32] into %{{.*}} : tensor<9x4x12x32xf32> -> tensor<100x128xf32>
// CHECK-NOT: linalg.matmul
// PLAIN-LABEL: func.func @packed
// PLAIN-NOT: linalg.pack
// PLAIN: linalg.matmul
func.func @packed(%a: tensor<100x3000xf32>, %b: tensor<3000x128xf32>) -> tensor<100x128xf32> {
  %0 = "ember.dot_general"(%a, %b) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<100x3000xf32>, tensor<3000x128xf32>) -> tensor<100x128xf32>
  return %0 : tensor<100x128xf32>
}

// Transposed operands (x.T @ y.T, as gradients make) pack straight from their layout: the
// left one's rows across its columns, the right one's columns in place.
// CHECK-LABEL: func.func @transposed
// CHECK: linalg.pack %arg0 outer_dims_perm = [1, 0] inner_dims_pos = [1, 0] inner_tiles = [12, 1] into %{{[a-z0-9_]+}} : tensor<100x48xf32> -> tensor<4x100x12x1xf32>
// CHECK: linalg.pack %arg1 inner_dims_pos = [0, 1] inner_tiles = [32, 1] into %{{.*}} {compilation_info = #[[PACKINFO]]} : tensor<7008x100xf32> -> tensor<219x100x32x1xf32>
// CHECK: linalg.mmt4d
func.func @transposed(%a: tensor<100x48xf32>, %b: tensor<7008x100xf32>) -> tensor<48x7008xf32> {
  %0 = "ember.dot_general"(%a, %b) {lhs_batch = array<i64>, lhs_contracting = array<i64: 0>, rhs_batch = array<i64>, rhs_contracting = array<i64: 1>} : (tensor<100x48xf32>, tensor<7008x100xf32>) -> tensor<48x7008xf32>
  return %0 : tensor<48x7008xf32>
}

// Must not fire: too few row tiles (47 < 4 x 12), too few column tiles (10 < 4 x 32), too
// shallow (64 deep), too little work (128 x 256 x 256 < 2^25, 11 x 8 tiles), float64, bf16 (IREE's data tiling keeps those), a batch of products,
// a matrix-vector product, dynamic sizes.
// CHECK-LABEL: func.func @not_packed
// CHECK-NOT: linalg.pack
// CHECK-NOT: linalg.mmt4d
// CHECK: return
func.func @not_packed(%a: tensor<47x128xf32>, %b: tensor<128x128xf32>, %c: tensor<256x128xf32>, %d: tensor<128x10xf32>, %e: tensor<256x64xf32>, %f: tensor<64x256xf32>, %g: tensor<256x128xf64>, %h: tensor<128x256xf64>, %i: tensor<256x128xbf16>, %j: tensor<128x256xbf16>, %k: tensor<2x256x128xf32>, %l: tensor<2x128x256xf32>, %m: tensor<128xf32>, %n: tensor<?x128xf32>, %o: tensor<128x256xf32>, %p: tensor<256x256xf32>) -> (tensor<47x128xf32>, tensor<256x10xf32>, tensor<256x256xf32>, tensor<256x256xf64>, tensor<256x256xbf16>, tensor<2x256x256xf32>, tensor<256xf32>, tensor<?x128xf32>, tensor<128x256xf32>) {
  %0 = "ember.dot_general"(%a, %b) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<47x128xf32>, tensor<128x128xf32>) -> tensor<47x128xf32>
  %1 = "ember.dot_general"(%c, %d) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<256x128xf32>, tensor<128x10xf32>) -> tensor<256x10xf32>
  %2 = "ember.dot_general"(%e, %f) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<256x64xf32>, tensor<64x256xf32>) -> tensor<256x256xf32>
  %3 = "ember.dot_general"(%g, %h) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<256x128xf64>, tensor<128x256xf64>) -> tensor<256x256xf64>
  %4 = "ember.dot_general"(%i, %j) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<256x128xbf16>, tensor<128x256xbf16>) -> tensor<256x256xbf16>
  %5 = "ember.dot_general"(%k, %l) {lhs_batch = array<i64: 0>, lhs_contracting = array<i64: 2>, rhs_batch = array<i64: 0>, rhs_contracting = array<i64: 1>} : (tensor<2x256x128xf32>, tensor<2x128x256xf32>) -> tensor<2x256x256xf32>
  %6 = "ember.dot_general"(%c, %m) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<256x128xf32>, tensor<128xf32>) -> tensor<256xf32>
  %7 = "ember.dot_general"(%n, %b) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<?x128xf32>, tensor<128x128xf32>) -> tensor<?x128xf32>
  %8 = "ember.dot_general"(%o, %p) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<128x256xf32>, tensor<256x256xf32>) -> tensor<128x256xf32>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8 : tensor<47x128xf32>, tensor<256x10xf32>, tensor<256x256xf32>, tensor<256x256xf64>, tensor<256x256xbf16>, tensor<2x256x256xf32>, tensor<256xf32>, tensor<?x128xf32>, tensor<128x256xf32>
}
