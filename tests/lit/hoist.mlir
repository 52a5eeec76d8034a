// RUN: ember-opt %s --ember-lower-to-linalg-avx512 --pass-pipeline='builtin.module(canonicalize,loop-invariant-code-motion,cse)' | filecheck %s

// The linalg phase's LICM: a weight the loop reads but never changes is packed once, before
// the loop; the carried operand, which changes every trip, is packed inside it. In a loop a
// product is packed below PACKED_MIN_WORK too (here 64 x 256 x 256).
// CHECK-LABEL: func.func @invariant_weight
// CHECK: linalg.pack %arg3 outer_dims_perm = [1, 0]
// CHECK: scf.for
// CHECK-NOT: linalg.pack %arg3
// CHECK: linalg.pack %{{.*}} padding_value
// CHECK: linalg.mmt4d
// CHECK: scf.yield
func.func @invariant_weight(%lo: tensor<i32>, %hi: tensor<i32>, %h: tensor<64x256xf32>, %w: tensor<256x256xf32>) -> tensor<64x256xf32> {
  %0 = "ember.for"(%lo, %hi, %h) ({
  ^bb0(%i: tensor<i32>, %c: tensor<64x256xf32>):
    %next = "ember.dot_general"(%c, %w) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
    "ember.yield"(%next) : (tensor<64x256xf32>) -> ()
  }) : (tensor<i32>, tensor<i32>, tensor<64x256xf32>) -> tensor<64x256xf32>
  return %0 : tensor<64x256xf32>
}

// Must not fire: a weight the loop changes is packed on every trip.
// CHECK-LABEL: func.func @carried_weight
// CHECK: scf.for
// CHECK: linalg.pack %{{.*}} padding_value
// CHECK: linalg.pack %{{.*}} outer_dims_perm = [1, 0]
// CHECK: linalg.mmt4d
// CHECK: scf.yield
func.func @carried_weight(%lo: tensor<i32>, %hi: tensor<i32>, %h: tensor<64x256xf32>, %w: tensor<256x256xf32>) -> tensor<64x256xf32> {
  %0:2 = "ember.for"(%lo, %hi, %h, %w) ({
  ^bb0(%i: tensor<i32>, %c: tensor<64x256xf32>, %ww: tensor<256x256xf32>):
    %next = "ember.dot_general"(%c, %ww) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
    %w2 = "ember.mul"(%ww, %ww) : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
    "ember.yield"(%next, %w2) : (tensor<64x256xf32>, tensor<256x256xf32>) -> ()
  }) : (tensor<i32>, tensor<i32>, tensor<64x256xf32>, tensor<256x256xf32>) -> (tensor<64x256xf32>, tensor<256x256xf32>)
  return %0#0 : tensor<64x256xf32>
}
