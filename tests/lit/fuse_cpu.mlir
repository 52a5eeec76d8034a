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

// A float16 chain kept by its sum: the sum accumulates in f32 and is rounded after the
// generic, the kept exps stay f16.
// LINALG-LABEL: func.func @softmax_f16
// LINALG: %[[G:.*]]:2 = linalg.generic {{.*}} outs(%{{.*}}, %{{.*}} : tensor<4xf32>, tensor<4x8xf16>)
// LINALG: %[[E:.*]] = math.exp %{{.*}} : f16
// LINALG: %[[W:.*]] = arith.extf %[[E]] : f16 to f32
// LINALG: arith.addf %[[W]], %{{.*}} : f32
// LINALG: linalg.yield %{{.*}}, %[[E]] : f32, f16
// LINALG: linalg.generic {{.*}} ins(%[[G]]#0 : tensor<4xf32>) outs(%{{.*}} : tensor<4xf16>)
// LINALG: arith.truncf %{{.*}} : f32 to f16
func.func @softmax_f16(%x: tensor<4x8xf16>, %m: tensor<4xf16>) -> tensor<4x8xf16> {
  %mb = "ember.broadcast_in_dim"(%m) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf16>) -> tensor<4x8xf16>
  %d = "ember.sub"(%x, %mb) : (tensor<4x8xf16>, tensor<4x8xf16>) -> tensor<4x8xf16>
  %e = "ember.exp"(%d) : (tensor<4x8xf16>) -> tensor<4x8xf16>
  %s = "ember.reduce_sum"(%e) {axes = array<i64: 1>} : (tensor<4x8xf16>) -> tensor<4xf16>
  %sb = "ember.broadcast_in_dim"(%s) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf16>) -> tensor<4x8xf16>
  %r = "ember.div"(%e, %sb) : (tensor<4x8xf16>, tensor<4x8xf16>) -> tensor<4x8xf16>
  return %r : tensor<4x8xf16>
}

// Must not fire: a reader before the reduction (the fusion takes the reduction's place),
// a reduction over a leading dim (the kept rows are not trailing), a row over 4 KiB (IREE
// would keep 8 of them on a worker's stack), a reduction (not an elementwise chain) that
// another reduction and later ops read.
// CHECK-LABEL: func.func @not_joined
// CHECK-NOT: "ember.fusion"
// CHECK: return
func.func @not_joined(%x1: tensor<8x8xf32>, %x2: tensor<8x8xf32>, %y: tensor<4x2048xf32>, %x4: tensor<8x8xf32>)
    -> (tensor<8x8xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<4x2048xf32>, tensor<4xf32>, tensor<8xf32>, tensor<f32>) {
  %e = "ember.exp"(%x1) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %n = "ember.neg"(%e) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %s = "ember.reduce_sum"(%e) {axes = array<i64: 1>} : (tensor<8x8xf32>) -> tensor<8xf32>
  %t = "ember.tanh"(%x2) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %c = "ember.reduce_sum"(%t) {axes = array<i64: 0>} : (tensor<8x8xf32>) -> tensor<8xf32>
  %l = "ember.log"(%y) : (tensor<4x2048xf32>) -> tensor<4x2048xf32>
  %r = "ember.reduce_max"(%l) {axes = array<i64: 1>} : (tensor<4x2048xf32>) -> tensor<4xf32>
  %mx = "ember.reduce_max"(%x4) {axes = array<i64: 1>} : (tensor<8x8xf32>) -> tensor<8xf32>
  %ms = "ember.reduce_sum"(%mx) {axes = array<i64: 0>} : (tensor<8xf32>) -> tensor<f32>
  return %n, %s, %t, %c, %l, %r, %mx, %ms : tensor<8x8xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<4x2048xf32>, tensor<4xf32>, tensor<8xf32>, tensor<f32>
}

// Sibling reductions: sums over the same dims of one input join one fusion placed where the
// first was, with a result each (Σx and Σx², read once); so do a sum and a max of one chain
// (sqrt computed once). Plain ember-fuse leaves them apart.
// CHECK-LABEL: func.func @siblings
// CHECK: %[[M:.*]]:2 = "ember.fusion"(%arg0)
// CHECK: %[[S:.*]] = "ember.reduce_sum"(%arg{{.*}})
// CHECK: "ember.mul"
// CHECK: %[[Q:.*]] = "ember.reduce_sum"
// CHECK: "ember.yield"(%[[S]], %[[Q]])
// CHECK: %[[R:.*]]:2 = "ember.fusion"(%arg1)
// CHECK: "ember.sqrt"
// CHECK-NOT: "ember.sqrt"
// CHECK: "ember.reduce_sum"
// CHECK: "ember.reduce_max"
// CHECK: return %[[M]]#0, %[[M]]#1, %[[R]]#0, %[[R]]#1
// LINALG-LABEL: func.func @siblings
// LINALG: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} outs(%{{.*}}, %{{.*}} : tensor<4xf32>, tensor<4xf32>)
// LINALG: arith.mulf
// LINALG: arith.addf
// LINALG: arith.addf
// LINALG: linalg.yield %{{.*}}, %{{.*}} : f32, f32
// LINALG: math.sqrt
// LINALG-NOT: math.sqrt
// LINALG: arith.maximumf
// LINALG: return
// PLAIN-LABEL: func.func @siblings
// PLAIN: %[[S:.*]] = "ember.reduce_sum"(%arg0)
// PLAIN: "ember.fusion"
func.func @siblings(%x: tensor<4x8xf32>, %z: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %s = "ember.reduce_sum"(%x) {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  %x2 = "ember.mul"(%x, %x) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %q = "ember.reduce_sum"(%x2) {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  %r = "ember.sqrt"(%z) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %r1 = "ember.reduce_sum"(%r) {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  %r2 = "ember.reduce_max"(%r) {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  return %s, %q, %r1, %r2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// Must not fire as siblings: a sum reading the other's result (a two-pass variance: the
// deviations need the mean), sums over different dims, sums of different inputs.
// CHECK-LABEL: func.func @not_siblings
// CHECK: "ember.reduce_sum"(%arg0) {axes = array<i64: 1>}
// CHECK: "ember.fusion"
// CHECK-NOT: "ember.yield"(%{{.*}}, %{{.*}})
// CHECK: return
func.func @not_siblings(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>, %w: tensor<4x8xf32>)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8xf32>, tensor<4xf32>) {
  %s = "ember.reduce_sum"(%x) {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  %mb = "ember.broadcast_in_dim"(%s) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x8xf32>
  %d = "ember.sub"(%x, %mb) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %d2 = "ember.mul"(%d, %d) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %q = "ember.reduce_sum"(%d2) {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  %e = "ember.exp"(%y) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %a = "ember.reduce_sum"(%e) {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  %b = "ember.reduce_sum"(%y) {axes = array<i64: 0>} : (tensor<4x8xf32>) -> tensor<8xf32>
  %f = "ember.exp"(%w) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %g = "ember.reduce_sum"(%f) {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  return %s, %q, %a, %b, %g : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8xf32>, tensor<4xf32>
}

// A chain whose reduction has a sibling stays out of that fusion: a reduction joins one
// fusion (the siblings'), and the chain is left to IREE as plain ember-fuse leaves it.
// CHECK-LABEL: func.func @kept_or_siblings
// CHECK: %[[E:.*]] = "ember.exp"(%arg0)
// CHECK: %[[F:.*]]:2 = "ember.fusion"(%[[E]])
// CHECK: "ember.neg"
// CHECK: "ember.yield"
// CHECK: "ember.fusion"(%[[F]]#1, %[[E]])
func.func @kept_or_siblings(%x: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4x8xf32>) {
  %e = "ember.exp"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %n = "ember.neg"(%e) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %a = "ember.reduce_sum"(%n) {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  %s = "ember.reduce_sum"(%e) {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  %sb = "ember.broadcast_in_dim"(%s) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x8xf32>
  %r = "ember.div"(%e, %sb) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %a, %r : tensor<4xf32>, tensor<4x8xf32>
}
