// RUN: ember-opt %s --ember-canonicalize | filecheck %s

// x * 1 and x + 0 fold to x; the dead exp and the constants disappear.
// CHECK-LABEL: func.func @identities
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT: return %[[X]]
func.func @identities(%x: tensor<4xf32>) -> tensor<4xf32> {
  %one = "ember.constant"() {value = dense<1.0> : tensor<4xf32>} : () -> tensor<4xf32>
  %zero = "ember.constant"() {value = dense<0.0> : tensor<4xf32>} : () -> tensor<4xf32>
  %dead = "ember.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %a = "ember.mul"(%x, %one) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %b = "ember.add"(%zero, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %b : tensor<4xf32>
}

// A reduction of no elements is its identity: 0 for the sum, -inf for the max over the
// empty dim, an empty result for the max over the full one. Must not fire on a reduction
// of elements.
// CHECK-LABEL: func.func @empty_reductions
// CHECK-DAG: "ember.constant"() {value = dense<0.000000e+00> : tensor<3xf32>}
// CHECK-DAG: "ember.constant"() {value = dense<0xFF800000> : tensor<3xf32>}
// CHECK-DAG: "ember.constant"() {value = {{.*}} : tensor<0xf32>}
// CHECK: "ember.reduce_sum"(%arg1)
// CHECK-NOT: "ember.reduce_
func.func @empty_reductions(%x: tensor<0x3xf32>, %y: tensor<2x3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<0xf32>, tensor<3xf32>) {
  %0 = "ember.reduce_sum"(%x) {axes = array<i64: 0>} : (tensor<0x3xf32>) -> tensor<3xf32>
  %1 = "ember.reduce_max"(%x) {axes = array<i64: 0>} : (tensor<0x3xf32>) -> tensor<3xf32>
  %2 = "ember.reduce_max"(%x) {axes = array<i64: 1>} : (tensor<0x3xf32>) -> tensor<0xf32>
  %3 = "ember.reduce_sum"(%y) {axes = array<i64: 0>} : (tensor<2x3xf32>) -> tensor<3xf32>
  return %0, %1, %2, %3 : tensor<3xf32>, tensor<3xf32>, tensor<0xf32>, tensor<3xf32>
}

// A reduction over dims of one element is a reshape (as XLA folds it); over a longer dim,
// or of another result dtype, it stays.
// CHECK-LABEL: func.func @unit_reductions
// CHECK: "ember.reshape"(%arg0) : (tensor<1x3xf32>) -> tensor<3xf32>
// CHECK: "ember.reduce_max"(%arg0) {axes = array<i64: 1>}
// CHECK-NOT: "ember.reduce_sum"
func.func @unit_reductions(%x: tensor<1x3xf32>) -> (tensor<3xf32>, tensor<1xf32>) {
  %0 = "ember.reduce_sum"(%x) {axes = array<i64: 0>} : (tensor<1x3xf32>) -> tensor<3xf32>
  %1 = "ember.reduce_max"(%x) {axes = array<i64: 1>} : (tensor<1x3xf32>) -> tensor<1xf32>
  return %0, %1 : tensor<3xf32>, tensor<1xf32>
}

// Must not fire: x * 2 and 0 - x are not identities (sub is not commutative).
// CHECK-LABEL: func.func @not_identities
// CHECK: "ember.mul"
// CHECK: "ember.sub"
func.func @not_identities(%x: tensor<4xf32>) -> tensor<4xf32> {
  %two = "ember.constant"() {value = dense<2.0> : tensor<4xf32>} : () -> tensor<4xf32>
  %zero = "ember.constant"() {value = dense<0.0> : tensor<4xf32>} : () -> tensor<4xf32>
  %a = "ember.mul"(%x, %two) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %b = "ember.sub"(%zero, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %b : tensor<4xf32>
}

// A transpose that moves only dims of size 1 is a reshape; one that reorders two larger
// dims is not.
// CHECK-LABEL: func.func @unit_transposes
// CHECK: "ember.reshape"(%{{.*}}) : (tensor<4x1x5xf32>) -> tensor<4x5x1xf32>
// CHECK: "ember.transpose"(%{{.*}}) {permutation = array<i64: 2, 1, 0>}
func.func @unit_transposes(%x: tensor<4x1x5xf32>) -> (tensor<4x5x1xf32>, tensor<5x1x4xf32>) {
  %a = "ember.transpose"(%x) {permutation = array<i64: 0, 2, 1>} : (tensor<4x1x5xf32>) -> tensor<4x5x1xf32>
  %b = "ember.transpose"(%x) {permutation = array<i64: 2, 1, 0>} : (tensor<4x1x5xf32>) -> tensor<5x1x4xf32>
  return %a, %b : tensor<4x5x1xf32>, tensor<5x1x4xf32>
}

// transpose(transpose(x)) with inverse permutations is x; otherwise one composed transpose.
// CHECK-LABEL: func.func @transposes
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK: %[[T:.*]] = "ember.transpose"(%[[X]]) {permutation = array<i64: 2, 0, 1>}
// CHECK-NOT: ember.transpose
// CHECK: return %[[X]], %[[T]]
func.func @transposes(%x: tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<4x2x3xf32>) {
  %a = "ember.transpose"(%x) {permutation = array<i64: 1, 0, 2>} : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
  %b = "ember.transpose"(%a) {permutation = array<i64: 1, 0, 2>} : (tensor<3x2x4xf32>) -> tensor<2x3x4xf32>
  %c = "ember.transpose"(%a) {permutation = array<i64: 2, 1, 0>} : (tensor<3x2x4xf32>) -> tensor<4x2x3xf32>
  return %b, %c : tensor<2x3x4xf32>, tensor<4x2x3xf32>
}

// Constants fold through elementwise ops and broadcasts (splats stay splats).
// CHECK-LABEL: func.func @constant_folding
// CHECK-NEXT: %[[C:.*]] = "ember.constant"() {value = dense<3.000000e+00> : tensor<1024x1024xf32>}
// CHECK-NEXT: %[[D:.*]] = "ember.constant"() {value = dense<[2, 4, 6]> : tensor<3xi32>}
// CHECK-NEXT: return %[[C]], %[[D]]
func.func @constant_folding() -> (tensor<1024x1024xf32>, tensor<3xi32>) {
  %a = "ember.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %b = "ember.constant"() {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
  %s = "ember.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %big = "ember.broadcast_in_dim"(%s) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<1024x1024xf32>
  %v = "ember.constant"() {value = dense<[1, 2, 3]> : tensor<3xi32>} : () -> tensor<3xi32>
  %w = "ember.add"(%v, %v) : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  return %big, %w : tensor<1024x1024xf32>, tensor<3xi32>
}

// A complex literal stays ember.complex of its two real constants (MLIR's Python bindings
// cannot read a complex elements attribute): nothing folds into a complex constant, while
// the real parts still fold.
// CHECK-LABEL: func.func @complex_is_not_folded
// CHECK-NEXT: %[[IM:.*]] = "ember.constant"() {value = dense<2.000000e+00> : tensor<f32>}
// CHECK-NEXT: %[[RE:.*]] = "ember.constant"() {value = dense<3.000000e+00> : tensor<f32>}
// CHECK-NEXT: %[[Z:.*]] = "ember.complex"(%[[RE]], %[[IM]])
// CHECK-NEXT: %[[N:.*]] = "ember.neg"(%[[Z]])
// CHECK-NEXT: return %[[N]]
func.func @complex_is_not_folded() -> tensor<complex<f32>> {
  %a = "ember.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %b = "ember.constant"() {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
  %re = "ember.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %z = "ember.complex"(%re, %b) : (tensor<f32>, tensor<f32>) -> tensor<complex<f32>>
  %n = "ember.neg"(%z) : (tensor<complex<f32>>) -> tensor<complex<f32>>
  return %n : tensor<complex<f32>>
}

// Common subexpressions are computed once; different attributes are not merged.
// CHECK-LABEL: func.func @cse
// CHECK-COUNT-1: "ember.exp"
// CHECK: "ember.compare"{{.*}}"LT"
// CHECK: "ember.compare"{{.*}}"GT"
func.func @cse(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xi1>, tensor<4xi1>) {
  %a = "ember.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %b = "ember.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %s = "ember.add"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %lt = "ember.compare"(%a, %b) {direction = "LT"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %gt = "ember.compare"(%a, %b) {direction = "GT"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  return %s, %lt, %gt : tensor<4xf32>, tensor<4xi1>, tensor<4xi1>
}

// An ember.call (custom_vjp, custom_jvp, checkpoint) is its body inline, nested calls too;
// the rest of the function is untouched, and a loop body without calls keeps its ops.
// CHECK-LABEL: func.func @calls_inline
// CHECK-NOT: ember.call
// CHECK: %[[E:.*]] = "ember.exp"(%arg0)
// CHECK: %[[T:.*]] = "ember.tanh"(%[[E]])
// CHECK: %[[S:.*]] = "ember.add"(%[[T]], %arg0)
// CHECK: "ember.sin"(%[[S]])
// CHECK-NOT: ember.call
// CHECK: return
func.func @calls_inline(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "ember.call"(%x) ({
  ^bb0(%a: tensor<4xf32>):
    %1 = "ember.exp"(%a) : (tensor<4xf32>) -> tensor<4xf32>
    %2 = "ember.call"(%1) ({
    ^bb0(%b: tensor<4xf32>):
      %3 = "ember.tanh"(%b) : (tensor<4xf32>) -> tensor<4xf32>
      "ember.yield"(%3) : (tensor<4xf32>) -> ()
    }) {key = "checkpoint1"} : (tensor<4xf32>) -> tensor<4xf32>
    %4 = "ember.add"(%2, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    "ember.yield"(%4) : (tensor<4xf32>) -> ()
  }) {key = "custom_vjp0"} : (tensor<4xf32>) -> tensor<4xf32>
  %5 = "ember.sin"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  return %5 : tensor<4xf32>
}

// A scan whose stacked outputs nobody reads: the carry that collects them, the insert that
// writes them and the zeros they start from go; the carry the caller reads stays.
// CHECK-LABEL: func.func @dead_stacked_outputs
// CHECK-SAME: (%[[H:.*]]: tensor<4xf32>, %[[XS:.*]]: tensor<8x4xf32>
// CHECK-NOT: dense<0.000000e+00> : tensor<8x4xf32>
// CHECK: %[[L:.*]] = "ember.for"(%{{.*}}, %{{.*}}, %[[H]]) ({
// CHECK-NEXT: ^bb0(%{{.*}}: tensor<i32>, %{{.*}}: tensor<4xf32>):
// CHECK-NOT: ember.dynamic_update_slice
// CHECK: "ember.yield"(%{{.*}}) : (tensor<4xf32>) -> ()
// CHECK-NEXT: }) : (tensor<i32>, tensor<i32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: return %[[L]]
func.func @dead_stacked_outputs(%h: tensor<4xf32>, %xs: tensor<8x4xf32>, %lo: tensor<i32>,
                                %hi: tensor<i32>) -> tensor<4xf32> {
  %zeros = "ember.constant"() {value = dense<0.0> : tensor<8x4xf32>} : () -> tensor<8x4xf32>
  %0:2 = "ember.for"(%lo, %hi, %h, %zeros) ({
  ^bb0(%i: tensor<i32>, %c: tensor<4xf32>, %ys: tensor<8x4xf32>):
    %z = "ember.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    %x = "ember.dynamic_slice"(%xs, %i, %z) {sizes = array<i64: 1, 4>} : (tensor<8x4xf32>, tensor<i32>, tensor<i32>) -> tensor<1x4xf32>
    %xr = "ember.reshape"(%x) : (tensor<1x4xf32>) -> tensor<4xf32>
    %n = "ember.add"(%c, %xr) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %nr = "ember.reshape"(%n) : (tensor<4xf32>) -> tensor<1x4xf32>
    %y = "ember.dynamic_update_slice"(%ys, %nr, %i, %z) {strides = array<i64: 1, 1>} : (tensor<8x4xf32>, tensor<1x4xf32>, tensor<i32>, tensor<i32>) -> tensor<8x4xf32>
    "ember.yield"(%n, %y) : (tensor<4xf32>, tensor<8x4xf32>) -> ()
  }) : (tensor<i32>, tensor<i32>, tensor<4xf32>, tensor<8x4xf32>) -> (tensor<4xf32>, tensor<8x4xf32>)
  return %0#0 : tensor<4xf32>
}

// Must not fire: a carry whose result is read (%0#1), one whose value feeds another carry
// (%s feeds %t's next value), and one a debug print reads. A while loop drops its dead
// carry from the condition's arguments too.
// CHECK-LABEL: func.func @live_carries
// CHECK: "ember.for"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) ({
// CHECK: "ember.debug_print"
// CHECK: "ember.yield"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> ()
// CHECK: "ember.while"(%{{.*}}) ({
// CHECK-NEXT: ^bb0(%{{.*}}: tensor<i32>):
// CHECK: }, {
// CHECK-NEXT: ^bb0(%{{.*}}: tensor<i32>):
// CHECK: }) : (tensor<i32>) -> tensor<i32>
func.func @live_carries(%a: tensor<4xf32>, %lo: tensor<i32>, %hi: tensor<i32>)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<i32>) {
  %0:4 = "ember.for"(%lo, %hi, %a, %a, %a, %a) ({
  ^bb0(%i: tensor<i32>, %r: tensor<4xf32>, %s: tensor<4xf32>, %t: tensor<4xf32>, %p: tensor<4xf32>):
    %r2 = "ember.exp"(%r) : (tensor<4xf32>) -> tensor<4xf32>
    %s2 = "ember.sin"(%s) : (tensor<4xf32>) -> tensor<4xf32>
    %t2 = "ember.add"(%t, %s) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    "ember.debug_print"(%p) {key = "k"} : (tensor<4xf32>) -> ()
    "ember.yield"(%r2, %s2, %t2, %p) : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> ()
  }) : (tensor<i32>, tensor<i32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  %1:2 = "ember.while"(%lo, %a) ({
  ^bb0(%i: tensor<i32>, %d: tensor<4xf32>):
    %c = "ember.compare"(%i, %hi) {direction = "LT"} : (tensor<i32>, tensor<i32>) -> tensor<i1>
    "ember.yield"(%c) : (tensor<i1>) -> ()
  }, {
  ^bb0(%i: tensor<i32>, %d: tensor<4xf32>):
    %one = "ember.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %next = "ember.add"(%i, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %d2 = "ember.exp"(%d) : (tensor<4xf32>) -> tensor<4xf32>
    "ember.yield"(%next, %d2) : (tensor<i32>, tensor<4xf32>) -> ()
  }) : (tensor<i32>, tensor<4xf32>) -> (tensor<i32>, tensor<4xf32>)
  return %0#0, %0#2, %1#0 : tensor<4xf32>, tensor<4xf32>, tensor<i32>
}

// A transpose of a product's free dims is the product of the swapped operands: grad's
// weight cotangent (g^T x)^T becomes x^T g. Batch dims stay first.
// CHECK-LABEL: func.func @transposed_products
// CHECK-SAME: (%[[G:.*]]: tensor<32x128xf32>, %[[X:.*]]: tensor<32x64xf32>, %[[A:.*]]: tensor<5x3x4xf32>, %[[B:.*]]: tensor<5x4x6xf32>)
// CHECK-NOT: ember.transpose
// CHECK: "ember.dot_general"(%[[X]], %[[G]]) {lhs_batch = array<i64>, lhs_contracting = array<i64: 0>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<32x64xf32>, tensor<32x128xf32>) -> tensor<64x128xf32>
// CHECK: "ember.dot_general"(%[[B]], %[[A]]) {lhs_batch = array<i64: 0>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64: 0>, rhs_contracting = array<i64: 2>} : (tensor<5x4x6xf32>, tensor<5x3x4xf32>) -> tensor<5x6x3xf32>
func.func @transposed_products(%g: tensor<32x128xf32>, %x: tensor<32x64xf32>, %a: tensor<5x3x4xf32>, %b: tensor<5x4x6xf32>) -> (tensor<64x128xf32>, tensor<5x6x3xf32>) {
  %0 = "ember.dot_general"(%g, %x) {lhs_batch = array<i64>, lhs_contracting = array<i64: 0>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<32x128xf32>, tensor<32x64xf32>) -> tensor<128x64xf32>
  %1 = "ember.transpose"(%0) {permutation = array<i64: 1, 0>} : (tensor<128x64xf32>) -> tensor<64x128xf32>
  %2 = "ember.dot_general"(%a, %b) {lhs_batch = array<i64: 0>, lhs_contracting = array<i64: 2>, rhs_batch = array<i64: 0>, rhs_contracting = array<i64: 1>} : (tensor<5x3x4xf32>, tensor<5x4x6xf32>) -> tensor<5x3x6xf32>
  %3 = "ember.transpose"(%2) {permutation = array<i64: 0, 2, 1>} : (tensor<5x3x6xf32>) -> tensor<5x6x3xf32>
  return %1, %3 : tensor<64x128xf32>, tensor<5x6x3xf32>
}

// Must not fire: the product is read untransposed too (two products would be computed),
// and a transpose that moves the batch dim is not a swap of the operands.
// CHECK-LABEL: func.func @kept_transposes
// CHECK-COUNT-2: "ember.transpose"
func.func @kept_transposes(%g: tensor<32x128xf32>, %x: tensor<32x64xf32>, %a: tensor<5x3x4xf32>, %b: tensor<5x4x6xf32>) -> (tensor<64x128xf32>, tensor<128x64xf32>, tensor<3x5x6xf32>) {
  %0 = "ember.dot_general"(%g, %x) {lhs_batch = array<i64>, lhs_contracting = array<i64: 0>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<32x128xf32>, tensor<32x64xf32>) -> tensor<128x64xf32>
  %1 = "ember.transpose"(%0) {permutation = array<i64: 1, 0>} : (tensor<128x64xf32>) -> tensor<64x128xf32>
  %2 = "ember.dot_general"(%a, %b) {lhs_batch = array<i64: 0>, lhs_contracting = array<i64: 2>, rhs_batch = array<i64: 0>, rhs_contracting = array<i64: 1>} : (tensor<5x3x4xf32>, tensor<5x4x6xf32>) -> tensor<5x3x6xf32>
  %3 = "ember.transpose"(%2) {permutation = array<i64: 1, 0, 2>} : (tensor<5x3x6xf32>) -> tensor<3x5x6xf32>
  return %1, %0, %3 : tensor<64x128xf32>, tensor<128x64xf32>, tensor<3x5x6xf32>
}
