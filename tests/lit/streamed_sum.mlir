// RUN: ember-opt %s --ember-lower-to-linalg-avx512 | filecheck %s
// RUN: ember-opt %s --ember-lower-to-linalg-cpu | filecheck %s --check-prefix=PLAIN

// On AVX-512 CPUs the first step of a float sum of a whole argument (nothing for IREE to fuse
// into it) is a dispatch of Ember's own: the flat input summed 2 KiB a step into one partial
// a chunk (here 1024 chunks of 1024, 32 a workgroup), each step prefetching the cache lines
// 4 KiB ahead, clamped to the input's last step; IREE sums the partials. A 2-D argument is
// flattened first.
// CHECK-LABEL: func.func @sums
// CHECK: flow.dispatch @ember_sum_f32_1024x1024::@partials(%arg0) : (tensor<1048576xf32>) -> tensor<1024xf32>
// CHECK: tensor.collapse_shape %arg1
// CHECK: flow.dispatch @ember_sum_f64_1024x1024::@partials
// CHECK-LABEL: func.func @kept
// CHECK-NOT: flow.dispatch
// CHECK: return
// CHECK-LABEL: hal.executable.source private @ember_sum_f32_1024x1024
// CHECK: hal.executable.export public @partials
// CHECK: %[[N:.*]] = arith.constant 32 : index
// CHECK: hal.return %[[N]]
// CHECK: func.func @partials()
// CHECK-DAG: %[[D:.*]] = arith.constant 1024 : index
// CHECK-DAG: %[[LAST:.*]] = arith.constant 1048064 : index
// CHECK: scf.for
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}) -> (vector<512xf32>)
// CHECK: %[[AT:.*]] = arith.addi
// CHECK: %[[FAR:.*]] = arith.addi %[[AT]], %[[D]]
// CHECK: arith.minui %[[FAR]], %[[LAST]]
// CHECK-COUNT-32: memref.prefetch {{.*}} read, locality<2>, data
// CHECK: vector.load
// CHECK: vector.reduction <add>
// CHECK-LABEL: hal.executable.source private @ember_sum_f64_1024x1024
// CHECK: vector<256xf64>
// CHECK-NOT: hal.executable.source
// PLAIN-NOT: ember_sum
func.func @sums(%x: tensor<1048576xf32>, %y: tensor<1024x1024xf64>) -> (tensor<f32>, tensor<f64>) {
  %0 = "ember.reduce_sum"(%x) {axes = array<i64: 0>} : (tensor<1048576xf32>) -> tensor<f32>
  %1 = "ember.reduce_sum"(%y) {axes = array<i64: 0, 1>} : (tensor<1024x1024xf64>) -> tensor<f64>
  return %0, %1 : tensor<f32>, tensor<f64>
}

// Must not fire: a sum of a computed value (IREE fuses the exp into its first step), a
// maximum, an integer sum, a sum over one axis of two, and chunks that 512 lanes do not
// divide (1000 of 1000).
func.func @kept(%x: tensor<1048576xf32>, %z: tensor<1048576xi32>, %w: tensor<1024x1024xf32>, %v: tensor<1000000xf32>) -> (tensor<f32>, tensor<f32>, tensor<i32>, tensor<1024xf32>, tensor<f32>) {
  %e = "ember.exp"(%x) : (tensor<1048576xf32>) -> tensor<1048576xf32>
  %0 = "ember.reduce_sum"(%e) {axes = array<i64: 0>} : (tensor<1048576xf32>) -> tensor<f32>
  %1 = "ember.reduce_max"(%x) {axes = array<i64: 0>} : (tensor<1048576xf32>) -> tensor<f32>
  %2 = "ember.reduce_sum"(%z) {axes = array<i64: 0>} : (tensor<1048576xi32>) -> tensor<i32>
  %3 = "ember.reduce_sum"(%w) {axes = array<i64: 1>} : (tensor<1024x1024xf32>) -> tensor<1024xf32>
  %4 = "ember.reduce_sum"(%v) {axes = array<i64: 0>} : (tensor<1000000xf32>) -> tensor<f32>
  return %0, %1, %2, %3, %4 : tensor<f32>, tensor<f32>, tensor<i32>, tensor<1024xf32>, tensor<f32>
}
