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
