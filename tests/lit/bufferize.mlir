// RUN: ember-opt %s --ember-bufferize | filecheck %s
// RUN: ember-opt %s --ember-bufferize --ember-lower-to-linalg | filecheck %s --check-prefix=ABI

// A same-index elementwise chain into one result: tied.
// CHECK-LABEL: func.func @chain
// CHECK-SAME: %arg0: tensor<4xf32> {ember.aliased_result = 0 : i64, ember.donated}
// ABI-LABEL: func.func @chain
// ABI-SAME: %arg0: tensor<4xf32> {iree.abi.output = 0 : index}
func.func @chain(%x: tensor<4xf32> {ember.donated}, %w: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "ember.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "ember.mul"(%0, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = "ember.add"(%1, %w) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %2 : tensor<4xf32>
}

// Hazards: not tied, and the reason is recorded.
// CHECK-LABEL: func.func @contraction
// CHECK-SAME: ember.not_aliased = "read by ember.dot_general (a contraction)"
// ABI-LABEL: func.func @contraction
// ABI-NOT: iree.abi.output
// ABI: return
func.func @contraction(%x: tensor<4x4xf32> {ember.donated}, %w: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = "ember.dot_general"(%x, %w) {lhs_contracting = array<i64: 1>, rhs_contracting = array<i64: 0>, lhs_batch = array<i64>, rhs_batch = array<i64>} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
// A read done before the write, in another dispatch (a training step: x is read by the
// forward contraction, whose result reaches the update only through a second contraction):
// tied as it is. A read IREE could fuse into the write's dispatch (the update as the
// matmul's epilogue), or one not ordered before it: tied after an ember.after (an ordering
// edge nothing fuses across). A read the write depends on by itself: never tied.
// CHECK-LABEL: func.func @read_before
// CHECK-SAME: %arg0: tensor<4x4xf32> {ember.aliased_result = 0 : i64, ember.donated}
// CHECK-NOT: ember.after
// CHECK: return
func.func @read_before(%x: tensor<4x4xf32> {ember.donated}, %w: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = "ember.dot_general"(%x, %w) {lhs_contracting = array<i64: 1>, rhs_contracting = array<i64: 0>, lhs_batch = array<i64>, rhs_batch = array<i64>} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %1 = "ember.dot_general"(%w, %0) {lhs_contracting = array<i64: 1>, rhs_contracting = array<i64: 0>, lhs_batch = array<i64>, rhs_batch = array<i64>} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %2 = "ember.sub"(%x, %1) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %2 : tensor<4x4xf32>
}
// CHECK-LABEL: func.func @read_by_the_writers_matmul
// CHECK-SAME: %arg0: tensor<4x4xf32> {ember.aliased_result = 0 : i64, ember.donated}
// CHECK: %[[D:.*]] = "ember.dot_general"(%arg0, %arg1)
// CHECK: %[[A:.*]] = "ember.after"(%[[D]])
// CHECK-NEXT: "ember.sub"(%arg0, %[[A]])
func.func @read_by_the_writers_matmul(%x: tensor<4x4xf32> {ember.donated}, %w: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = "ember.dot_general"(%x, %w) {lhs_contracting = array<i64: 1>, rhs_contracting = array<i64: 0>, lhs_batch = array<i64>, rhs_batch = array<i64>} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %1 = "ember.sub"(%x, %0) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %1 : tensor<4x4xf32>
}
// A read the write waits for that other ops consume too: all of them read it through one
// ordering edge (IREE computed a cheap read again inside another consumer's dispatch, which
// the write did not wait for). A read the write's chain alone consumes has just its edge
// (read_by_the_writers_matmul above).
// CHECK-LABEL: func.func @shared_read_is_computed_once
// CHECK: %[[R:.*]] = "ember.rev"(%arg0)
// CHECK-NEXT: %[[F:.*]] = "ember.after"(%[[R]])
// CHECK-NEXT: "ember.add"(%[[F]], %arg1)
// CHECK-NEXT: "ember.mul"(%[[F]], %arg1)
func.func @shared_read_is_computed_once(%x: tensor<4xf32> {ember.donated}, %k: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = "ember.rev"(%x) {dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "ember.add"(%0, %k) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = "ember.mul"(%0, %k) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %1, %2 : tensor<4xf32>, tensor<4xf32>
}
// CHECK-LABEL: func.func @transposed
// CHECK-SAME: %arg0: tensor<4x4xf32> {ember.aliased_result = 0 : i64, ember.donated}
// CHECK: %[[T:.*]] = "ember.transpose"(%arg0)
// CHECK: %[[A:.*]] = "ember.after"(%[[T]])
// CHECK: "ember.add"(%[[A]], %arg1)
func.func @transposed(%x: tensor<4x4xf32> {ember.donated}, %w: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = "ember.transpose"(%x) {permutation = array<i64: 1, 0>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %1 = "ember.add"(%0, %w) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %1 : tensor<4x4xf32>
}
// CHECK-LABEL: func.func @two_results
// CHECK-SAME: ember.not_aliased = "also read by results [0, 1]: only one may be written into it"
func.func @two_results(%x: tensor<4xf32> {ember.donated}, %w: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = "ember.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "ember.add"(%x, %w) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}
// CHECK-LABEL: func.func @no_match
// CHECK-SAME: ember.not_aliased = "no unclaimed result of type tensor<4xf32>"
func.func @no_match(%x: tensor<4xf32> {ember.donated}) -> tensor<f32> {
  %0 = "ember.reduce_sum"(%x) {axes = array<i64: 0>} : (tensor<4xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// Refs become values: reads see the latest write, the last value is an extra result tied
// to the ref's argument.
// CHECK-LABEL: func.func @ref
// CHECK-SAME: (%arg0: tensor<3xf32> {ember.aliased_result = 1 : i64, ember.ref}, %arg1: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
// CHECK-NOT: ember.ref_get
// CHECK-NOT: ember.ref_set
// CHECK: %[[S:.*]] = "ember.sin"(%arg0)
// CHECK: %[[A:.*]] = "ember.add"(%[[S]], %arg1)
// CHECK: %[[W:.*]] = "ember.copy"(%arg1)
// CHECK: return %[[W]], %[[A]]
func.func @ref(%r: !ember.ref<tensor<3xf32>>, %w: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "ember.ref_get"(%r) : (!ember.ref<tensor<3xf32>>) -> tensor<3xf32>
  %1 = "ember.sin"(%0) : (tensor<3xf32>) -> tensor<3xf32>
  "ember.ref_set"(%r, %1) : (!ember.ref<tensor<3xf32>>, tensor<3xf32>) -> ()
  %2 = "ember.ref_get"(%r) : (!ember.ref<tensor<3xf32>>) -> tensor<3xf32>
  %3 = "ember.add"(%2, %w) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  "ember.ref_set"(%r, %3) : (!ember.ref<tensor<3xf32>>, tensor<3xf32>) -> ()
  return %w : tensor<3xf32>
}

// An argument the caller keeps, written in place (an insert into it): copied first, and the
// insert goes to the copy. IREE would write into the caller's buffer (iree-org/iree#16168).
// CHECK-LABEL: func.func @kept_argument_is_copied
// CHECK: %[[C:.*]] = "ember.copy"(%arg0)
// CHECK: "ember.dynamic_update_slice"(%[[C]], %arg1
// ABI-LABEL: func.func @kept_argument_is_copied
// ABI: util.optimization_barrier
// ABI: tensor.insert_slice
func.func @kept_argument_is_copied(%x: tensor<8xf32>, %u: tensor<2xf32>, %i: tensor<i32>) -> tensor<8xf32> {
  %0 = "ember.dynamic_update_slice"(%x, %u, %i) {strides = array<i64: 1>} : (tensor<8xf32>, tensor<2xf32>, tensor<i32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// Only the write goes to the copy: the argument's other uses (here the window the update is
// computed from, and a reshape that is only read) read the argument and need not wait for
// the copy.
// CHECK-LABEL: func.func @kept_argument_is_read_in_place
// CHECK: %[[C:.*]] = "ember.copy"(%arg0)
// CHECK: %[[W:.*]] = "ember.slice"(%arg0)
// CHECK: %[[R:.*]] = "ember.reshape"(%arg0)
// CHECK: %[[M:.*]] = "ember.mul"(%[[W]], %[[W]])
// CHECK: "ember.dynamic_update_slice"(%[[C]], %[[M]]
// CHECK-NOT: ember.copy
// CHECK: return
func.func @kept_argument_is_read_in_place(%x: tensor<8xf32>, %i: tensor<i32>) -> (tensor<8xf32>, tensor<2x4xf32>) {
  %w = "ember.slice"(%x) {start_indices = array<i64: 1>, limit_indices = array<i64: 3>, strides = array<i64: 1>} : (tensor<8xf32>) -> tensor<2xf32>
  %r = "ember.reshape"(%x) : (tensor<8xf32>) -> tensor<2x4xf32>
  %e = "ember.exp"(%r) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %m = "ember.mul"(%w, %w) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %0 = "ember.dynamic_update_slice"(%x, %m, %i) {strides = array<i64: 1>} : (tensor<8xf32>, tensor<2xf32>, tensor<i32>) -> tensor<8xf32>
  return %0, %e : tensor<8xf32>, tensor<2x4xf32>
}

// The same through a loop: the argument is the initial carry the body writes into.
// CHECK-LABEL: func.func @kept_loop_carry_is_copied
// CHECK: %[[C:.*]] = "ember.copy"(%arg0)
// CHECK: "ember.for"(%arg2, %arg3, %[[C]])
func.func @kept_loop_carry_is_copied(%x: tensor<8xf32>, %u: tensor<2xf32>, %lo: tensor<i32>, %hi: tensor<i32>) -> tensor<8xf32> {
  %0 = "ember.for"(%lo, %hi, %x) ({
  ^bb0(%i: tensor<i32>, %c: tensor<8xf32>):
    %1 = "ember.dynamic_update_slice"(%c, %u, %i) {strides = array<i64: 1>} : (tensor<8xf32>, tensor<2xf32>, tensor<i32>) -> tensor<8xf32>
    "ember.yield"(%1) : (tensor<8xf32>) -> ()
  }) : (tensor<i32>, tensor<i32>, tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// A value made inside the function that a loop writes in place but that is read again, and
// a constant (IREE merges equal ones), start their loops from copies; a value used only as
// the initial carry, and a carry the body only reads, must not be copied.
// CHECK-LABEL: func.func @shared_loop_inits_are_copied
// CHECK: %[[E:.*]] = "ember.exp"(%arg0)
// CHECK: %[[Z:.*]] = "ember.constant"
// CHECK: %[[N:.*]] = "ember.neg"(%arg0)
// CHECK: %[[CE:.*]] = "ember.copy"(%[[E]])
// CHECK-NEXT: "ember.for"(%arg2, %arg3, %[[CE]])
// CHECK: %[[CZ:.*]] = "ember.copy"(%[[Z]])
// CHECK-NEXT: "ember.for"(%arg2, %arg3, %[[CZ]])
// CHECK-NOT: ember.copy
// CHECK: "ember.for"(%arg2, %arg3, %[[N]])
// CHECK-NOT: ember.copy
// CHECK: "ember.for"(%arg2, %arg3, %[[E]])
// CHECK: return
func.func @shared_loop_inits_are_copied(%x: tensor<8xf32>, %u: tensor<2xf32>, %lo: tensor<i32>, %hi: tensor<i32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %e = "ember.exp"(%x) : (tensor<8xf32>) -> tensor<8xf32>
  %z = "ember.constant"() {value = dense<0.0> : tensor<8xf32>} : () -> tensor<8xf32>
  %n = "ember.neg"(%x) : (tensor<8xf32>) -> tensor<8xf32>
  %0 = "ember.for"(%lo, %hi, %e) ({
  ^bb0(%i: tensor<i32>, %c: tensor<8xf32>):
    %1 = "ember.dynamic_update_slice"(%c, %u, %i) {strides = array<i64: 1>} : (tensor<8xf32>, tensor<2xf32>, tensor<i32>) -> tensor<8xf32>
    "ember.yield"(%1) : (tensor<8xf32>) -> ()
  }) : (tensor<i32>, tensor<i32>, tensor<8xf32>) -> tensor<8xf32>
  %2 = "ember.for"(%lo, %hi, %z) ({
  ^bb0(%i: tensor<i32>, %c: tensor<8xf32>):
    %3 = "ember.dynamic_update_slice"(%c, %u, %i) {strides = array<i64: 1>} : (tensor<8xf32>, tensor<2xf32>, tensor<i32>) -> tensor<8xf32>
    "ember.yield"(%3) : (tensor<8xf32>) -> ()
  }) : (tensor<i32>, tensor<i32>, tensor<8xf32>) -> tensor<8xf32>
  %4 = "ember.for"(%lo, %hi, %n) ({
  ^bb0(%i: tensor<i32>, %c: tensor<8xf32>):
    %5 = "ember.dynamic_update_slice"(%c, %u, %i) {strides = array<i64: 1>} : (tensor<8xf32>, tensor<2xf32>, tensor<i32>) -> tensor<8xf32>
    "ember.yield"(%5) : (tensor<8xf32>) -> ()
  }) : (tensor<i32>, tensor<i32>, tensor<8xf32>) -> tensor<8xf32>
  %6 = "ember.for"(%lo, %hi, %e) ({
  ^bb0(%i: tensor<i32>, %c: tensor<8xf32>):
    %7 = "ember.exp"(%c) : (tensor<8xf32>) -> tensor<8xf32>
    "ember.yield"(%7) : (tensor<8xf32>) -> ()
  }) : (tensor<i32>, tensor<i32>, tensor<8xf32>) -> tensor<8xf32>
  return %e, %0, %2, %4, %6 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// Must not fire: a donated argument is the caller's no more (an insert into it is tied to the
// result); a value made inside the function is updated in place; an argument only read is
// left alone.
// CHECK-LABEL: func.func @no_copy
// CHECK-SAME: ember.aliased_result = 0
// CHECK-NOT: ember.copy
// CHECK: return
func.func @no_copy(%x: tensor<8xf32> {ember.donated}, %y: tensor<8xf32>, %u: tensor<2xf32>, %i: tensor<i32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %0 = "ember.dynamic_update_slice"(%x, %u, %i) {strides = array<i64: 1>} : (tensor<8xf32>, tensor<2xf32>, tensor<i32>) -> tensor<8xf32>
  %1 = "ember.exp"(%y) : (tensor<8xf32>) -> tensor<8xf32>
  %2 = "ember.dynamic_update_slice"(%1, %u, %i) {strides = array<i64: 1>} : (tensor<8xf32>, tensor<2xf32>, tensor<i32>) -> tensor<8xf32>
  return %0, %2 : tensor<8xf32>, tensor<8xf32>
}

// Every result owns its buffer: a kept argument returned (or a reshape of it), or one value
// returned twice, is copied; IREE would hand out the same buffer.
// CHECK-LABEL: func.func @returned_argument
// CHECK: %[[R:.*]] = "ember.reshape"(%arg0)
// CHECK: %[[E:.*]] = "ember.exp"(%arg0)
// CHECK: %[[C0:.*]] = "ember.copy"(%[[R]])
// CHECK: %[[C1:.*]] = "ember.copy"(%[[E]])
// CHECK: return %[[C0]], %[[E]], %[[C1]]
func.func @returned_argument(%x: tensor<8xf32>) -> (tensor<2x4xf32>, tensor<8xf32>, tensor<8xf32>) {
  %0 = "ember.reshape"(%x) : (tensor<8xf32>) -> tensor<2x4xf32>
  %1 = "ember.exp"(%x) : (tensor<8xf32>) -> tensor<8xf32>
  return %0, %1, %1 : tensor<2x4xf32>, tensor<8xf32>, tensor<8xf32>
}

// Through control flow: a branch may yield the argument itself.
// CHECK-LABEL: func.func @returned_through_a_branch
// CHECK: %[[I:.*]] = "ember.if"
// CHECK: "ember.copy"(%[[I]])
func.func @returned_through_a_branch(%p: tensor<i1>, %x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = "ember.if"(%p) ({
    "ember.yield"(%x) : (tensor<8xf32>) -> ()
  }, {
    %1 = "ember.exp"(%x) : (tensor<8xf32>) -> tensor<8xf32>
    "ember.yield"(%1) : (tensor<8xf32>) -> ()
  }) : (tensor<i1>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// Must not fire: a donated argument returned as it is, values made inside returned once.
// CHECK-LABEL: func.func @owned_results
// CHECK-NOT: ember.copy
// CHECK: return
func.func @owned_results(%x: tensor<8xf32> {ember.donated}, %y: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %0 = "ember.exp"(%y) : (tensor<8xf32>) -> tensor<8xf32>
  return %x, %0 : tensor<8xf32>, tensor<8xf32>
}

// An in-place write waits for the earlier reads of its destination (IREE elided its own
// copy and then ran the write first, beside an independent dispatch): an ordering edge to
// the value written where IREE can join them, else a copy of the destination. Must not
// fire for the reads the write is computed from.
// CHECK-LABEL: func.func @earlier_read_is_waited_for
// CHECK: %[[X:.*]] = "ember.exp"(%arg0)
// CHECK: %[[R:.*]] = "ember.sin"(%[[X]])
// CHECK-NEXT: %[[F:.*]] = "ember.after"(%[[R]])
// CHECK-NEXT: "ember.mul"(%[[F]], %[[F]])
// CHECK: %[[V:.*]] = "ember.mul"(%arg1, %arg1)
// CHECK: %[[A:.*]] = "ember.after"(%[[V]], %[[F]])
// CHECK: "ember.dynamic_update_slice"(%[[X]], %[[A]]
func.func @earlier_read_is_waited_for(%a: tensor<8xf32>, %u: tensor<2xf32>, %i: tensor<i32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %x = "ember.exp"(%a) : (tensor<8xf32>) -> tensor<8xf32>
  %r = "ember.sin"(%x) : (tensor<8xf32>) -> tensor<8xf32>
  %s = "ember.mul"(%r, %r) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %v = "ember.mul"(%u, %u) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %0 = "ember.dynamic_update_slice"(%x, %v, %i) {strides = array<i64: 1>} : (tensor<8xf32>, tensor<2xf32>, tensor<i32>) -> tensor<8xf32>
  return %0, %s : tensor<8xf32>, tensor<8xf32>
}

// CHECK-LABEL: func.func @returned_read_gets_a_copy
// CHECK: %[[X:.*]] = "ember.exp"(%arg0)
// CHECK: %[[C:.*]] = "ember.copy"(%[[X]])
// CHECK: %[[F:.*]] = "ember.after"(%[[C]])
// CHECK: "ember.dynamic_update_slice"(%[[F]], %arg1
func.func @returned_read_gets_a_copy(%a: tensor<8xf32>, %u: tensor<2xf32>, %i: tensor<i32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %x = "ember.exp"(%a) : (tensor<8xf32>) -> tensor<8xf32>
  %r = "ember.sin"(%x) : (tensor<8xf32>) -> tensor<8xf32>
  %0 = "ember.dynamic_update_slice"(%x, %u, %i) {strides = array<i64: 1>} : (tensor<8xf32>, tensor<2xf32>, tensor<i32>) -> tensor<8xf32>
  return %0, %r : tensor<8xf32>, tensor<8xf32>
}

// CHECK-LABEL: func.func @read_for_the_write
// CHECK-NOT: ember.after
// CHECK-NOT: ember.copy
// CHECK: return
func.func @read_for_the_write(%a: tensor<8xf32>, %i: tensor<i32>) -> tensor<8xf32> {
  %x = "ember.exp"(%a) : (tensor<8xf32>) -> tensor<8xf32>
  %w = "ember.slice"(%x) {start_indices = array<i64: 1>, limit_indices = array<i64: 3>, strides = array<i64: 1>} : (tensor<8xf32>) -> tensor<2xf32>
  %m = "ember.mul"(%w, %w) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %0 = "ember.dynamic_update_slice"(%x, %m, %i) {strides = array<i64: 1>} : (tensor<8xf32>, tensor<2xf32>, tensor<i32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// An update that views its own destination's buffer is written from a copy (IREE copied
// the window within the one buffer, and its runtime refused the overlapping ranges). Must
// not fire for an update computed from such a view (a buffer of its own).
// CHECK-LABEL: func.func @update_views_its_destination
// CHECK: %[[S:.*]] = "ember.slice"
// CHECK-NEXT: %[[C:.*]] = "ember.copy"(%[[S]])
// CHECK-NEXT: "ember.dynamic_update_slice"(%{{.*}}, %[[C]],
func.func @update_views_its_destination(%a: tensor<6xf32>) -> tensor<6xf32> {
  %one = "ember.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
  %e = "ember.exp"(%a) : (tensor<6xf32>) -> tensor<6xf32>
  %s = "ember.slice"(%e) {start_indices = array<i64: 0>, limit_indices = array<i64: 5>, strides = array<i64: 1>} : (tensor<6xf32>) -> tensor<5xf32>
  %u = "ember.dynamic_update_slice"(%e, %s, %one) {strides = array<i64: 1>} : (tensor<6xf32>, tensor<5xf32>, tensor<i32>) -> tensor<6xf32>
  return %u : tensor<6xf32>
}
// CHECK-LABEL: func.func @update_computed_from_its_destination
// CHECK-NOT: "ember.copy"
// CHECK: return
func.func @update_computed_from_its_destination(%a: tensor<6xf32>) -> tensor<6xf32> {
  %one = "ember.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
  %e = "ember.exp"(%a) : (tensor<6xf32>) -> tensor<6xf32>
  %s = "ember.slice"(%e) {start_indices = array<i64: 0>, limit_indices = array<i64: 5>, strides = array<i64: 1>} : (tensor<6xf32>) -> tensor<5xf32>
  %n = "ember.neg"(%s) : (tensor<5xf32>) -> tensor<5xf32>
  %u = "ember.dynamic_update_slice"(%e, %n, %one) {strides = array<i64: 1>} : (tensor<6xf32>, tensor<5xf32>, tensor<i32>) -> tensor<6xf32>
  return %u : tensor<6xf32>
}
