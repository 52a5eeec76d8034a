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

// A group reads at most FUSION_INPUTS (24) values from outside (IREE binds at most 32
// buffers to a dispatch and does not count them when it fuses): the sum of 30 arrays is
// two fusions, the second reading the first through an ember.after (a barrier, so IREE
// does not fuse them again). Must not fire for a small chain: one fusion, no ember.after.
// CHECK-LABEL: func.func @sum_of_thirty
// CHECK: %[[F:.*]] = "ember.fusion"
// CHECK: %[[A:.*]] = "ember.after"(%[[F]])
// CHECK: "ember.fusion"(%[[A]]
// CHECK-LABEL: func.func @sum_of_four
// CHECK-NOT: ember.after
// CHECK: "ember.fusion"
// CHECK-NOT: ember.after
// CHECK: return
func.func @sum_of_thirty(%a0: tensor<4xf32>, %a1: tensor<4xf32>, %a2: tensor<4xf32>, %a3: tensor<4xf32>, %a4: tensor<4xf32>, %a5: tensor<4xf32>, %a6: tensor<4xf32>, %a7: tensor<4xf32>, %a8: tensor<4xf32>, %a9: tensor<4xf32>, %a10: tensor<4xf32>, %a11: tensor<4xf32>, %a12: tensor<4xf32>, %a13: tensor<4xf32>, %a14: tensor<4xf32>, %a15: tensor<4xf32>, %a16: tensor<4xf32>, %a17: tensor<4xf32>, %a18: tensor<4xf32>, %a19: tensor<4xf32>, %a20: tensor<4xf32>, %a21: tensor<4xf32>, %a22: tensor<4xf32>, %a23: tensor<4xf32>, %a24: tensor<4xf32>, %a25: tensor<4xf32>, %a26: tensor<4xf32>, %a27: tensor<4xf32>, %a28: tensor<4xf32>, %a29: tensor<4xf32>) -> tensor<4xf32> {
  %s1 = "ember.add"(%a0, %a1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s2 = "ember.add"(%s1, %a2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s3 = "ember.add"(%s2, %a3) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s4 = "ember.add"(%s3, %a4) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s5 = "ember.add"(%s4, %a5) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s6 = "ember.add"(%s5, %a6) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s7 = "ember.add"(%s6, %a7) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s8 = "ember.add"(%s7, %a8) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s9 = "ember.add"(%s8, %a9) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s10 = "ember.add"(%s9, %a10) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s11 = "ember.add"(%s10, %a11) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s12 = "ember.add"(%s11, %a12) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s13 = "ember.add"(%s12, %a13) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s14 = "ember.add"(%s13, %a14) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s15 = "ember.add"(%s14, %a15) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s16 = "ember.add"(%s15, %a16) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s17 = "ember.add"(%s16, %a17) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s18 = "ember.add"(%s17, %a18) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s19 = "ember.add"(%s18, %a19) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s20 = "ember.add"(%s19, %a20) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s21 = "ember.add"(%s20, %a21) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s22 = "ember.add"(%s21, %a22) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s23 = "ember.add"(%s22, %a23) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s24 = "ember.add"(%s23, %a24) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s25 = "ember.add"(%s24, %a25) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s26 = "ember.add"(%s25, %a26) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s27 = "ember.add"(%s26, %a27) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s28 = "ember.add"(%s27, %a28) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s29 = "ember.add"(%s28, %a29) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %s29 : tensor<4xf32>
}
func.func @sum_of_four(%b0: tensor<4xf32>, %b1: tensor<4xf32>, %b2: tensor<4xf32>, %b3: tensor<4xf32>) -> tensor<4xf32> {
  %u1 = "ember.add"(%b0, %b1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %u2 = "ember.add"(%u1, %b2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %u3 = "ember.add"(%u2, %b3) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %u3 : tensor<4xf32>
}

// A chain longer than FUSION_BODY_COST (13 sines of 86 units: over 1024) is cut in two
// fusions kept apart by an ordering edge; the 11 sines next to the result stay one.
// CHECK-LABEL: func.func @long_chain
// CHECK: "ember.fusion"(%arg0)
// CHECK-COUNT-2: "ember.sin"
// CHECK: "ember.after"
// CHECK: "ember.fusion"
// CHECK-COUNT-11: "ember.sin"
// CHECK-NOT: "ember.sin"
func.func @long_chain(%x: tensor<8xf32>) -> tensor<8xf32> {
  %s0 = "ember.sin"(%x) : (tensor<8xf32>) -> tensor<8xf32>
  %s1 = "ember.sin"(%s0) : (tensor<8xf32>) -> tensor<8xf32>
  %s2 = "ember.sin"(%s1) : (tensor<8xf32>) -> tensor<8xf32>
  %s3 = "ember.sin"(%s2) : (tensor<8xf32>) -> tensor<8xf32>
  %s4 = "ember.sin"(%s3) : (tensor<8xf32>) -> tensor<8xf32>
  %s5 = "ember.sin"(%s4) : (tensor<8xf32>) -> tensor<8xf32>
  %s6 = "ember.sin"(%s5) : (tensor<8xf32>) -> tensor<8xf32>
  %s7 = "ember.sin"(%s6) : (tensor<8xf32>) -> tensor<8xf32>
  %s8 = "ember.sin"(%s7) : (tensor<8xf32>) -> tensor<8xf32>
  %s9 = "ember.sin"(%s8) : (tensor<8xf32>) -> tensor<8xf32>
  %s10 = "ember.sin"(%s9) : (tensor<8xf32>) -> tensor<8xf32>
  %s11 = "ember.sin"(%s10) : (tensor<8xf32>) -> tensor<8xf32>
  %s12 = "ember.sin"(%s11) : (tensor<8xf32>) -> tensor<8xf32>
  return %s12 : tensor<8xf32>
}
