// RUN: ember-opt %s --verify-ember --ember-fuse --verify-ember | filecheck %s
// RUN: ember-opt %s --ember-fuse --ember-lower-to-linalg | filecheck %s --check-prefix=LINALG

// SELU: one group; splat constants move in, the input stays outside.
// CHECK-LABEL: func.func @selu
// CHECK: %[[F:.*]] = "ember.fusion"(%arg0) ({
// CHECK: ^bb0(%[[X:.*]]: tensor<8xf32>):
// CHECK: "ember.compare"(%[[X]]
// CHECK: "ember.select"
// CHECK: "ember.yield"
// CHECK: return %[[F]]
// LINALG-LABEL: func.func @selu
// LINALG-COUNT-1: linalg.generic
// LINALG-NOT: linalg.generic
// LINALG: math.exp
// LINALG: arith.select
// LINALG: return
func.func @selu(%x: tensor<8xf32>) -> tensor<8xf32> {
  %zero = "ember.constant"() {value = dense<0.0> : tensor<8xf32>} : () -> tensor<8xf32>
  %a = "ember.constant"() {value = dense<1.67> : tensor<8xf32>} : () -> tensor<8xf32>
  %s = "ember.constant"() {value = dense<1.05> : tensor<8xf32>} : () -> tensor<8xf32>
  %c = "ember.compare"(%x, %zero) {direction = "GT"} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
  %e = "ember.exp"(%x) : (tensor<8xf32>) -> tensor<8xf32>
  %m = "ember.mul"(%a, %e) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %d = "ember.sub"(%m, %a) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %w = "ember.select"(%c, %x, %d) : (tensor<8xi1>, tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %r = "ember.mul"(%s, %w) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// A reduction root takes its elementwise producers; a broadcast becomes an input map.
// CHECK-LABEL: func.func @sum_of_squares
// CHECK: "ember.fusion"(%arg1, %arg0)
// CHECK: "ember.broadcast_in_dim"
// CHECK: "ember.sub"
// CHECK: "ember.mul"
// CHECK: "ember.reduce_sum"
// CHECK: "ember.yield"
// LINALG-LABEL: func.func @sum_of_squares
// LINALG: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}], iterator_types = ["parallel", "reduction"]}
// LINALG: arith.subf
// LINALG: arith.mulf
// LINALG: arith.addf
// LINALG-NOT: linalg.generic
func.func @sum_of_squares(%x: tensor<2x8xf32>, %m: tensor<2xf32>) -> tensor<2xf32> {
  %mb = "ember.broadcast_in_dim"(%m) {broadcast_dimensions = array<i64: 0>} : (tensor<2xf32>) -> tensor<2x8xf32>
  %d = "ember.sub"(%x, %mb) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %sq = "ember.mul"(%d, %d) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %s = "ember.reduce_sum"(%sq) {axes = array<i64: 1>} : (tensor<2x8xf32>) -> tensor<2xf32>
  return %s : tensor<2xf32>
}

// Must not fire: a value used outside the group is not pulled in (it would be computed
// twice), a single op is no group, and a chain feeding a reduction is left to IREE.
// CHECK-LABEL: func.func @shared
// LINALG-LABEL: func.func @shared
// CHECK: %[[E:.*]] = "ember.exp"(%arg0)
// CHECK: "ember.neg"(%[[E]])
// CHECK: "ember.reduce_sum"(%[[E]])
// CHECK-NOT: ember.fusion
func.func @shared(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<f32>) {
  %e = "ember.exp"(%x) : (tensor<8xf32>) -> tensor<8xf32>
  %n = "ember.neg"(%e) : (tensor<8xf32>) -> tensor<8xf32>
  %s = "ember.reduce_sum"(%e) {axes = array<i64: 0>} : (tensor<8xf32>) -> tensor<f32>
  return %n, %s : tensor<8xf32>, tensor<f32>
}

// A large reduction to a few elements runs in two steps (split_reduction.py): it takes no
// producers (IREE fuses them into its first step), and is lowered as chunks, then partials.
// CHECK-LABEL: func.func @split_sum
// CHECK-NOT: ember.fusion
// LINALG-LABEL: func.func @split_sum
// LINALG: linalg.generic {{.*}}iterator_types = ["parallel"]
// LINALG: arith.mulf
// LINALG: tensor.expand_shape {{.*}} output_shape [256, 1024]
// LINALG: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}}tensor<256x1024xf32>
// LINALG: linalg.generic {{.*}}iterator_types = ["reduction"]{{.*}}tensor<256xf32>
func.func @split_sum(%x: tensor<262144xf32>) -> tensor<f32> {
  %sq = "ember.mul"(%x, %x) : (tensor<262144xf32>, tensor<262144xf32>) -> tensor<262144xf32>
  %s = "ember.reduce_sum"(%sq) {axes = array<i64: 0>} : (tensor<262144xf32>) -> tensor<f32>
  return %s : tensor<f32>
}

// Must not split: below 2^18 elements, or with many elements kept.
// CHECK-LABEL: func.func @unsplit_sums
// CHECK-COUNT-2: "ember.fusion"
// LINALG-LABEL: func.func @unsplit_sums
// LINALG-NOT: tensor.expand_shape
// LINALG: return
func.func @unsplit_sums(%x: tensor<131072xf32>, %y: tensor<1024x256xf32>) -> (tensor<f32>, tensor<1024xf32>) {
  %sq = "ember.mul"(%x, %x) : (tensor<131072xf32>, tensor<131072xf32>) -> tensor<131072xf32>
  %s = "ember.reduce_sum"(%sq) {axes = array<i64: 0>} : (tensor<131072xf32>) -> tensor<f32>
  %e = "ember.exp"(%y) : (tensor<1024x256xf32>) -> tensor<1024x256xf32>
  %r = "ember.reduce_sum"(%e) {axes = array<i64: 1>} : (tensor<1024x256xf32>) -> tensor<1024xf32>
  return %s, %r : tensor<f32>, tensor<1024xf32>
}
