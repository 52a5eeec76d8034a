// RUN: ember-opt %s --ember-lower-to-linalg-avx512 --pass-pipeline='builtin.module(canonicalize,loop-invariant-code-motion,cse)' | filecheck %s

// The linalg phase's LICM (products of 2^25+ multiply-adds are packed): a weight the loop
// reads but never changes is packed once, before the loop; the carried operand, which
// changes every trip, is packed inside it.
// CHECK-LABEL: func.func @invariant_weight
// CHECK: linalg.pack %arg3 outer_dims_perm = [1, 0]
// CHECK: scf.for
// CHECK-NOT: linalg.pack %arg3
// CHECK: linalg.pack %{{.*}} padding_value
// CHECK: linalg.mmt4d
// CHECK: scf.yield
func.func @invariant_weight(%lo: tensor<i32>, %hi: tensor<i32>, %h: tensor<128x512xf32>, %w: tensor<512x512xf32>) -> tensor<128x512xf32> {
  %0 = "ember.for"(%lo, %hi, %h) ({
  ^bb0(%i: tensor<i32>, %c: tensor<128x512xf32>):
    %next = "ember.dot_general"(%c, %w) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<128x512xf32>, tensor<512x512xf32>) -> tensor<128x512xf32>
    "ember.yield"(%next) : (tensor<128x512xf32>) -> ()
  }) : (tensor<i32>, tensor<i32>, tensor<128x512xf32>) -> tensor<128x512xf32>
  return %0 : tensor<128x512xf32>
}

// Must not fire: a weight the loop changes is packed on every trip.
// CHECK-LABEL: func.func @carried_weight
// CHECK: scf.for
// CHECK: linalg.pack %{{.*}} padding_value
// CHECK: linalg.pack %{{.*}} outer_dims_perm = [1, 0]
// CHECK: linalg.mmt4d
// CHECK: scf.yield
func.func @carried_weight(%lo: tensor<i32>, %hi: tensor<i32>, %h: tensor<128x512xf32>, %w: tensor<512x512xf32>) -> tensor<128x512xf32> {
  %0:2 = "ember.for"(%lo, %hi, %h, %w) ({
  ^bb0(%i: tensor<i32>, %c: tensor<128x512xf32>, %ww: tensor<512x512xf32>):
    %next = "ember.dot_general"(%c, %ww) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<128x512xf32>, tensor<512x512xf32>) -> tensor<128x512xf32>
    %w2 = "ember.mul"(%ww, %ww) : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
    "ember.yield"(%next, %w2) : (tensor<128x512xf32>, tensor<512x512xf32>) -> ()
  }) : (tensor<i32>, tensor<i32>, tensor<128x512xf32>, tensor<512x512xf32>) -> (tensor<128x512xf32>, tensor<512x512xf32>)
  return %0#0 : tensor<128x512xf32>
}
