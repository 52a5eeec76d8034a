// RUN: ember-opt %s --ember-lower-to-linalg-avx512 | filecheck %s
// RUN: ember-opt %s --ember-lower-to-linalg-cpu | filecheck %s --check-prefix=PLAIN

// On AVX-512 CPUs the first step of a split reduction (here 1024 chunks of 1024, reduced in
// their last dim) keeps 2 KiB of accumulators: 512 float32 or 256 float64 lanes a step, 32
// chunks a workgroup; a chunk those lanes do not divide takes the most that do, to 128 bytes
// (1280 int32: 256 lanes, the float64 config; 1250 float32 in @kept: none). Other steps,
// other element types (float16, complex), and other CPUs keep IREE's choice. A sum of an
// argument (nothing fused into its first step) takes the same config.
// CHECK: #[[F32:.*]] = #iree_cpu.lowering_config<distribution = [32, 0], vector_common_parallel = [1, 0], vector_reduction = [0, 512]>
// CHECK: #[[F64:.*]] = #iree_cpu.lowering_config<distribution = [32, 0], vector_common_parallel = [1, 0], vector_reduction = [0, 256]>
// CHECK-LABEL: func.func @sums
// CHECK: math.exp
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<1024x1024xf32>) outs(%{{.*}} : tensor<1024xf32>) attrs = {compilation_info = #[[C32:.*]]} {
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<1024xf32>) outs(%{{.*}} : tensor<f32>) {{{$}}
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<1024x1024xf64>) outs(%{{.*}} : tensor<1024xf64>) attrs = {compilation_info = #[[C64:.*]]} {
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<1024x1280xi32>) outs(%{{.*}} : tensor<1024xi32>) attrs = {compilation_info = #[[C64]]} {
// CHECK-LABEL: func.func @arguments
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<1024x1024xf32>) outs(%{{.*}} : tensor<1024xf32>) attrs = {compilation_info = #[[C32]]} {
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<1024x1024xf64>) outs(%{{.*}} : tensor<1024xf64>) attrs = {compilation_info = #[[C64]]} {
// CHECK-LABEL: func.func @kept
// CHECK-NOT: compilation_info
// CHECK: return
// PLAIN-NOT: compilation_info
func.func @sums(%x: tensor<1048576xf32>, %y: tensor<1048576xf64>, %z: tensor<1310720xi32>) -> (tensor<f32>, tensor<f64>, tensor<i32>) {
  %e = "ember.exp"(%x) : (tensor<1048576xf32>) -> tensor<1048576xf32>
  %0 = "ember.reduce_sum"(%e) {axes = array<i64: 0>} : (tensor<1048576xf32>) -> tensor<f32>
  %1 = "ember.reduce_max"(%y) {axes = array<i64: 0>} : (tensor<1048576xf64>) -> tensor<f64>
  %2 = "ember.reduce_sum"(%z) {axes = array<i64: 0>} : (tensor<1310720xi32>) -> tensor<i32>
  return %0, %1, %2 : tensor<f32>, tensor<f64>, tensor<i32>
}
func.func @arguments(%x: tensor<1048576xf32>, %y: tensor<1024x1024xf64>) -> (tensor<f32>, tensor<f64>) {
  %0 = "ember.reduce_sum"(%x) {axes = array<i64: 0>} : (tensor<1048576xf32>) -> tensor<f32>
  %1 = "ember.reduce_sum"(%y) {axes = array<i64: 0, 1>} : (tensor<1024x1024xf64>) -> tensor<f64>
  return %0, %1 : tensor<f32>, tensor<f64>
}
func.func @kept(%x: tensor<1048576xf16>, %y: tensor<1024x1024xf32>, %z: tensor<1000000xf32>) -> (tensor<f16>, tensor<1024xf32>, tensor<f32>) {
  %0 = "ember.reduce_sum"(%x) {axes = array<i64: 0>} : (tensor<1048576xf16>) -> tensor<f16>
  %1 = "ember.reduce_sum"(%y) {axes = array<i64: 1>} : (tensor<1024x1024xf32>) -> tensor<1024xf32>
  %2 = "ember.reduce_sum"(%z) {axes = array<i64: 0>} : (tensor<1000000xf32>) -> tensor<f32>
  return %0, %1, %2 : tensor<f16>, tensor<1024xf32>, tensor<f32>
}
