// RUN: ember-opt %s --verify-ember --ember-moments --verify-ember | filecheck %s
// RUN: ember-opt %s --ember-moments --ember-fuse-cpu --ember-lower-to-linalg | filecheck %s --check-prefix=LINALG

// Layernorm's variance: Σ(x - m)², m the mean from Σx. Σx and Σx² are summed in float64
// where Σx was; the variance is Σx² - m(2Σx - n m) in float64, clamped at 0; the deviations
// the output reads stay.
// CHECK-LABEL: func.func @layernorm
// CHECK: %[[W:.*]] = "ember.convert"(%arg0) : (tensor<4x8xf32>) -> tensor<4x8xf64>
// CHECK: %[[S:.*]] = "ember.reduce_sum"(%[[W]]) {axes = array<i64: 1>} : (tensor<4x8xf64>) -> tensor<4xf64>
// CHECK: %[[W2:.*]] = "ember.mul"(%[[W]], %[[W]])
// CHECK: %[[Q:.*]] = "ember.reduce_sum"(%[[W2]]) {axes = array<i64: 1>}
// CHECK: "ember.convert"(%[[S]]) : (tensor<4xf64>) -> tensor<4xf32>
// CHECK: "ember.sub"(%arg0
// CHECK: dense<8.000000e+00> : tensor<4xf64>
// CHECK: %[[V:.*]] = "ember.sub"(%[[Q]], %{{.*}}) : (tensor<4xf64>, tensor<4xf64>)
// CHECK: "ember.max"(%[[V]], %{{.*}})
// CHECK: "ember.convert"(%{{.*}}) : (tensor<4xf64>) -> tensor<4xf32>
// CHECK-NOT: "ember.reduce_sum"
// CHECK: return
// One generic reads x for both sums; the output's generic reads it again.
// LINALG-LABEL: func.func @layernorm
// LINALG: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} ins(%arg0 : tensor<4x8xf32>) outs(%{{.*}}, %{{.*}} : tensor<4xf64>, tensor<4xf64>)
// LINALG: arith.extf
// LINALG: linalg.yield %{{.*}}, %{{.*}} : f64, f64
// LINALG-NOT: iterator_types = ["parallel", "reduction"]
// LINALG: return
func.func @layernorm(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = "ember.reduce_sum"(%x) {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  %s1 = "ember.reshape"(%s) : (tensor<4xf32>) -> tensor<4x1xf32>
  %c = "ember.constant"() {value = dense<0.125> : tensor<4x1xf32>} : () -> tensor<4x1xf32>
  %m = "ember.mul"(%s1, %c) : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %mb = "ember.broadcast_in_dim"(%m) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<4x1xf32>) -> tensor<4x8xf32>
  %d = "ember.sub"(%x, %mb) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %d2 = "ember.mul"(%d, %d) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %q = "ember.reduce_sum"(%d2) {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  %q1 = "ember.reshape"(%q) : (tensor<4xf32>) -> tensor<4x1xf32>
  %qb = "ember.broadcast_in_dim"(%q1) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<4x1xf32>) -> tensor<4x8xf32>
  %r = "ember.div"(%d, %qb) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// Must not fire: float64 data (no wider type to sum in), a mean that is not computed from
// Σx (one pass already), a mean that varies along the summed dims, a product of two different
// deviations, a sum that runs in two steps (split_reduction.py; ember-fuse-cpu would not
// fuse its two sums).
// CHECK-LABEL: func.func @not_rewritten
// CHECK-NOT: "ember.convert"
// CHECK: return
func.func @not_rewritten(%x: tensor<4x8xf64>, %y: tensor<4x8xf32>, %my: tensor<4xf32>, %big: tensor<1048576xf32>)
    -> (tensor<4xf64>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<f32>) {
  %s = "ember.reduce_sum"(%x) {axes = array<i64: 1>} : (tensor<4x8xf64>) -> tensor<4xf64>
  %sb = "ember.broadcast_in_dim"(%s) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf64>) -> tensor<4x8xf64>
  %d = "ember.sub"(%x, %sb) : (tensor<4x8xf64>, tensor<4x8xf64>) -> tensor<4x8xf64>
  %d2 = "ember.mul"(%d, %d) : (tensor<4x8xf64>, tensor<4x8xf64>) -> tensor<4x8xf64>
  %q = "ember.reduce_sum"(%d2) {axes = array<i64: 1>} : (tensor<4x8xf64>) -> tensor<4xf64>
  %yb = "ember.broadcast_in_dim"(%my) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x8xf32>
  %e = "ember.sub"(%y, %yb) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %e2 = "ember.mul"(%e, %e) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %qe = "ember.reduce_sum"(%e2) {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  %c = "ember.reduce_sum"(%y) {axes = array<i64: 0>} : (tensor<4x8xf32>) -> tensor<8xf32>
  %cb = "ember.broadcast_in_dim"(%c) {broadcast_dimensions = array<i64: 1>} : (tensor<8xf32>) -> tensor<4x8xf32>
  %f = "ember.sub"(%y, %cb) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %f2 = "ember.mul"(%f, %f) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %qf = "ember.reduce_sum"(%f2) {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  %sy = "ember.reduce_sum"(%y) {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  %syb = "ember.broadcast_in_dim"(%sy) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x8xf32>
  %g = "ember.sub"(%y, %syb) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %gf = "ember.mul"(%g, %f) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %qg = "ember.reduce_sum"(%gf) {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  %sbig = "ember.reduce_sum"(%big) {axes = array<i64: 0>} : (tensor<1048576xf32>) -> tensor<f32>
  %bb = "ember.broadcast_in_dim"(%sbig) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<1048576xf32>
  %h = "ember.sub"(%big, %bb) : (tensor<1048576xf32>, tensor<1048576xf32>) -> tensor<1048576xf32>
  %h2 = "ember.mul"(%h, %h) : (tensor<1048576xf32>, tensor<1048576xf32>) -> tensor<1048576xf32>
  %qh = "ember.reduce_sum"(%h2) {axes = array<i64: 0>} : (tensor<1048576xf32>) -> tensor<f32>
  return %q, %qe, %qf, %qg, %qh : tensor<4xf64>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<f32>
}
