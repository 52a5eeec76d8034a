// RUN: ember-opt %s --verify-ember --ember-fuse-cpu --verify-ember | filecheck %s
// RUN: ember-opt %s --ember-fuse-cpu --ember-lower-to-linalg | filecheck %s --check-prefix=LINALG
// RUN: ember-opt %s --ember-fuse | filecheck %s --check-prefix=PLAIN

// Softmax: the exp chain that the sum and the division read joins the sum, as the fusion's
// second result, which the division reads. Plain ember-fuse leaves the chain to IREE.
// CHECK-LABEL: func.func @softmax
// CHECK: %[[F:.*]]:2 = "ember.fusion"(%arg1, %arg0)
// CHECK: "ember.sub"
// CHECK: %[[E:.*]] = "ember.exp"
// CHECK: %[[S:.*]] = "ember.reduce_sum"(%[[E]])
// CHECK: "ember.yield"(%[[S]], %[[E]])
// CHECK: "ember.fusion"(%{{.*}}, %[[F]]#1)
// LINALG-LABEL: func.func @softmax
// LINALG: %[[G:.*]]:2 = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} outs(%{{.*}}, %{{.*}} : tensor<4xf32>, tensor<4x8xf32>)
// LINALG: math.exp
// LINALG: arith.addf
// LINALG: linalg.yield %{{.*}}, %{{.*}} : f32, f32
// LINALG: } -> (tensor<4xf32>, tensor<4x8xf32>)
// LINALG: linalg.generic {{.*}} ins(%[[G]]#1, %{{.*}} : tensor<4x8xf32>
// LINALG-NOT: math.exp
// LINALG: return
// PLAIN-LABEL: func.func @softmax
// PLAIN: %[[E:.*]] = "ember.exp"
// PLAIN: "ember.reduce_sum"(%[[E]])
func.func @softmax(%x: tensor<4x8xf32>, %m: tensor<4xf32>) -> tensor<4x8xf32> {
  %mb = "ember.broadcast_in_dim"(%m) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x8xf32>
  %d = "ember.sub"(%x, %mb) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %e = "ember.exp"(%d) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %s = "ember.reduce_sum"(%e) {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  %sb = "ember.broadcast_in_dim"(%s) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x8xf32>
  %r = "ember.div"(%e, %sb) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// Must not fire: a reader before the reduction (the fusion takes the reduction's place),
// a reduction over a leading dim (the kept rows are not trailing), a row over 4 KiB (IREE
// would keep 8 of them on a worker's stack), two reductions reading the chain, a reduction
// (not an elementwise chain) that another reduction and later ops read.
// CHECK-LABEL: func.func @not_joined
// CHECK-NOT: "ember.fusion"
// CHECK: return
func.func @not_joined(%x: tensor<8x8xf32>, %y: tensor<4x2048xf32>)
    -> (tensor<8x8xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<4x2048xf32>, tensor<4xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<f32>) {
  %e = "ember.exp"(%x) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %n = "ember.neg"(%e) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %s = "ember.reduce_sum"(%e) {axes = array<i64: 1>} : (tensor<8x8xf32>) -> tensor<8xf32>
  %t = "ember.tanh"(%x) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %c = "ember.reduce_sum"(%t) {axes = array<i64: 0>} : (tensor<8x8xf32>) -> tensor<8xf32>
  %l = "ember.log"(%y) : (tensor<4x2048xf32>) -> tensor<4x2048xf32>
  %r = "ember.reduce_max"(%l) {axes = array<i64: 1>} : (tensor<4x2048xf32>) -> tensor<4xf32>
  %q = "ember.sqrt"(%x) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %q1 = "ember.reduce_sum"(%q) {axes = array<i64: 1>} : (tensor<8x8xf32>) -> tensor<8xf32>
  %q2 = "ember.reduce_max"(%q) {axes = array<i64: 1>} : (tensor<8x8xf32>) -> tensor<8xf32>
  %mx = "ember.reduce_max"(%x) {axes = array<i64: 1>} : (tensor<8x8xf32>) -> tensor<8xf32>
  %ms = "ember.reduce_sum"(%mx) {axes = array<i64: 0>} : (tensor<8xf32>) -> tensor<f32>
  return %n, %s, %t, %c, %l, %r, %q1, %q2, %mx, %ms : tensor<8x8xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<4x2048xf32>, tensor<4xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<f32>
}
