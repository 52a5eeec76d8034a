// RUN: ember-opt %s --verify-ember --ember-canonicalize --ember-lower-to-linalg | filecheck %s

// The lowered module declares its device's link to itself: without it IREE copies every
// loop-carried tensor on every trip (a transfer "to" the device from a block argument).
// CHECK: module attributes {stream.topology = #hal.device.topology<links = [(@__device_0 -> @__device_0

// ember.if holds both branches as regions; a closed-over value (%y) is used directly.
// CHECK-LABEL: func.func @branches
// CHECK: %[[P:.*]] = tensor.extract %arg0[] : tensor<i1>
// CHECK: scf.if %[[P]] -> (tensor<3xf32>) {
// CHECK: linalg.generic
// CHECK: arith.addf
// CHECK: scf.yield
// CHECK: } else {
// CHECK: scf.yield %arg1
func.func @branches(%p: tensor<i1>, %x: tensor<3xf32>, %y: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "ember.if"(%p) ({
    %1 = "ember.add"(%x, %y) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    "ember.yield"(%1) : (tensor<3xf32>) -> ()
  }, {
    "ember.yield"(%x) : (tensor<3xf32>) -> ()
  }) : (tensor<i1>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// ember.case: a chain of scf.if on index == i, the last branch as the fallback.
// CHECK-LABEL: func.func @cases
// CHECK: arith.cmpi eq
// CHECK: scf.if
// CHECK: } else {
// CHECK: arith.cmpi eq
// CHECK: scf.if
func.func @cases(%i: tensor<i32>, %x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "ember.case"(%i) ({
    "ember.yield"(%x) : (tensor<3xf32>) -> ()
  }, {
    %1 = "ember.neg"(%x) : (tensor<3xf32>) -> tensor<3xf32>
    "ember.yield"(%1) : (tensor<3xf32>) -> ()
  }, {
    %2 = "ember.exp"(%x) : (tensor<3xf32>) -> tensor<3xf32>
    "ember.yield"(%2) : (tensor<3xf32>) -> ()
  }) : (tensor<i32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// ember.while: cond and body regions take the carries; one scf.while, not an unrolled body.
// CHECK-LABEL: func.func @loop
// CHECK: scf.while (%[[W:.*]] = %arg0) : (tensor<i32>) -> tensor<i32> {
// CHECK: arith.cmpi slt
// CHECK: scf.condition
// CHECK: } do {
// CHECK: arith.addi
// CHECK: scf.yield
// CHECK-NOT: scf.while
func.func @loop(%n: tensor<i32>) -> tensor<i32> {
  %0 = "ember.while"(%n) ({
  ^bb0(%i: tensor<i32>):
    %ten = "ember.constant"() {value = dense<10> : tensor<i32>} : () -> tensor<i32>
    %c = "ember.compare"(%i, %ten) {direction = "LT"} : (tensor<i32>, tensor<i32>) -> tensor<i1>
    "ember.yield"(%c) : (tensor<i1>) -> ()
  }, {
  ^bb0(%i: tensor<i32>):
    %one = "ember.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %next = "ember.add"(%i, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    "ember.yield"(%next) : (tensor<i32>) -> ()
  }) : (tensor<i32>) -> tensor<i32>
  return %0 : tensor<i32>
}

// ember.for: a counted loop; the body takes (i, carries...) and becomes one scf.for over
// index bounds, the induction variable handed to it as a scalar tensor.
// CHECK-LABEL: func.func @counted
// CHECK: %[[LO:.*]] = arith.index_cast
// CHECK: %[[HI:.*]] = arith.index_cast
// CHECK: scf.for %[[I:.*]] = %[[LO]] to %[[HI]] step %{{.*}} iter_args(%[[C:.*]] = %arg2) -> (tensor<4xf32>) {
// CHECK: tensor.from_elements
// CHECK: arith.mulf
// CHECK: scf.yield
// CHECK-NOT: scf.while
func.func @counted(%lo: tensor<i32>, %hi: tensor<i32>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "ember.for"(%lo, %hi, %x) ({
  ^bb0(%i: tensor<i32>, %c: tensor<4xf32>):
    %next = "ember.mul"(%c, %c) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    "ember.yield"(%next) : (tensor<4xf32>) -> ()
  }) : (tensor<i32>, tensor<i32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// A rank-0 op in a loop is host arithmetic (extract, compute, from_elements) where IREE's VM
// runs its whole body (sqrt), and a kernel where it does not (atan2's body has math.copysign,
// sin's math.fma: the VM has neither).
// CHECK-LABEL: func.func @host_scalars
// CHECK: scf.for
// CHECK: tensor.extract
// CHECK-NOT: linalg.generic
// CHECK: math.sqrt
// CHECK: tensor.from_elements
// CHECK: linalg.generic
// CHECK: math.copysign
// CHECK: scf.yield
func.func @host_scalars(%lo: tensor<i32>, %hi: tensor<i32>, %x: tensor<f32>) -> tensor<f32> {
  %0 = "ember.for"(%lo, %hi, %x) ({
  ^bb0(%i: tensor<i32>, %c: tensor<f32>):
    %s = "ember.sqrt"(%c) : (tensor<f32>) -> tensor<f32>
    %a = "ember.atan2"(%s, %c) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "ember.yield"(%a) : (tensor<f32>) -> ()
  }) : (tensor<i32>, tensor<i32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// Unused results: the if goes, unless a region prints.
// CHECK-LABEL: func.func @dead
// CHECK-NOT: scf.if
// CHECK: return
func.func @dead(%p: tensor<i1>, %x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "ember.if"(%p) ({
    "ember.yield"(%x) : (tensor<3xf32>) -> ()
  }, {
    "ember.yield"(%x) : (tensor<3xf32>) -> ()
  }) : (tensor<i1>) -> tensor<3xf32>
  return %x : tensor<3xf32>
}
// CHECK-LABEL: func.func @printing
// CHECK: scf.if
// CHECK: flow.tensor.trace "k"
func.func @printing(%p: tensor<i1>, %x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "ember.if"(%p) ({
    "ember.debug_print"(%x) {key = "k"} : (tensor<3xf32>) -> ()
    "ember.yield"(%x) : (tensor<3xf32>) -> ()
  }, {
    "ember.yield"(%x) : (tensor<3xf32>) -> ()
  }) : (tensor<i1>) -> tensor<3xf32>
  return %x : tensor<3xf32>
}

// ember-loop-kernels: a loop elementwise in its carries becomes ember.elementwise_for, lowered
// to one linalg.generic with the trips inside (16 lanes side by side); a loop whose body
// reads across elements (here a reduction) stays an ember.for.
// RUN: ember-opt %s --ember-loop-kernels | filecheck %s --check-prefix=KERNEL
// RUN: ember-opt %s --ember-loop-kernels --ember-lower-to-linalg | filecheck %s --check-prefix=KLOWER
// KERNEL-LABEL: func.func @elementwise_loop
// KERNEL: "ember.elementwise_for"
// KERNEL-LABEL: func.func @reducing_loop
// KERNEL-NOT: ember.elementwise_for
// KERNEL: "ember.for"
// KLOWER-LABEL: func.func @elementwise_loop
// KLOWER: linalg.generic
// KLOWER: scf.for
// KLOWER-COUNT-16: arith.mulf
// KLOWER-NOT: arith.mulf
// KLOWER: scf.yield
func.func @elementwise_loop(%lo: tensor<i32>, %hi: tensor<i32>, %x: tensor<16xf32>, %s: tensor<f32>) -> tensor<16xf32> {
  %0 = "ember.for"(%lo, %hi, %x) ({
  ^bb0(%i: tensor<i32>, %c: tensor<16xf32>):
    %b = "ember.broadcast_in_dim"(%s) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<16xf32>
    %next = "ember.mul"(%c, %b) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
    "ember.yield"(%next) : (tensor<16xf32>) -> ()
  }) : (tensor<i32>, tensor<i32>, tensor<16xf32>) -> tensor<16xf32>
  return %0 : tensor<16xf32>
}
func.func @reducing_loop(%lo: tensor<i32>, %hi: tensor<i32>, %x: tensor<16xf32>) -> tensor<16xf32> {
  %0 = "ember.for"(%lo, %hi, %x) ({
  ^bb0(%i: tensor<i32>, %c: tensor<16xf32>):
    %t = "ember.reduce_sum"(%c) {axes = array<i64: 0>} : (tensor<16xf32>) -> tensor<f32>
    %b = "ember.broadcast_in_dim"(%t) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<16xf32>
    %next = "ember.sub"(%c, %b) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
    "ember.yield"(%next) : (tensor<16xf32>) -> ()
  }) : (tensor<i32>, tensor<i32>, tensor<16xf32>) -> tensor<16xf32>
  return %0 : tensor<16xf32>
}

// A kernel binds one buffer per carry read and one per lane and carry written, and IREE
// binds at most 32 to a dispatch: 4 carries take 4 lanes (16 products a trip, 20 buffers);
// 17 carries fit no lane count (34 buffers at one lane) and stay an ember.for.
// KERNEL-LABEL: func.func @four_carries
// KERNEL: "ember.elementwise_for"
// KERNEL-LABEL: func.func @seventeen_carries
// KERNEL-NOT: ember.elementwise_for
// KERNEL: "ember.for"
// KLOWER-LABEL: func.func @four_carries
// KLOWER: scf.for
// KLOWER-COUNT-16: arith.mulf
// KLOWER-NOT: arith.mulf
// KLOWER: scf.yield
func.func @four_carries(%lo: tensor<i32>, %hi: tensor<i32>, %x0: tensor<4xf32>, %x1: tensor<4xf32>, %x2: tensor<4xf32>, %x3: tensor<4xf32>) -> tensor<4xf32> {
  %0:4 = "ember.for"(%lo, %hi, %x0, %x1, %x2, %x3) ({
  ^bb0(%i: tensor<i32>, %c0: tensor<4xf32>, %c1: tensor<4xf32>, %c2: tensor<4xf32>, %c3: tensor<4xf32>):
    %n0 = "ember.mul"(%c0, %c1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %n1 = "ember.mul"(%c1, %c2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %n2 = "ember.mul"(%c2, %c3) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %n3 = "ember.mul"(%c3, %c0) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    "ember.yield"(%n0, %n1, %n2, %n3) : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> ()
  }) : (tensor<i32>, tensor<i32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  return %0#0 : tensor<4xf32>
}
func.func @seventeen_carries(%lo: tensor<i32>, %hi: tensor<i32>, %x0: tensor<4xf32>, %x1: tensor<4xf32>, %x2: tensor<4xf32>, %x3: tensor<4xf32>, %x4: tensor<4xf32>, %x5: tensor<4xf32>, %x6: tensor<4xf32>, %x7: tensor<4xf32>, %x8: tensor<4xf32>, %x9: tensor<4xf32>, %x10: tensor<4xf32>, %x11: tensor<4xf32>, %x12: tensor<4xf32>, %x13: tensor<4xf32>, %x14: tensor<4xf32>, %x15: tensor<4xf32>, %x16: tensor<4xf32>) -> tensor<4xf32> {
  %0:17 = "ember.for"(%lo, %hi, %x0, %x1, %x2, %x3, %x4, %x5, %x6, %x7, %x8, %x9, %x10, %x11, %x12, %x13, %x14, %x15, %x16) ({
  ^bb0(%i: tensor<i32>, %c0: tensor<4xf32>, %c1: tensor<4xf32>, %c2: tensor<4xf32>, %c3: tensor<4xf32>, %c4: tensor<4xf32>, %c5: tensor<4xf32>, %c6: tensor<4xf32>, %c7: tensor<4xf32>, %c8: tensor<4xf32>, %c9: tensor<4xf32>, %c10: tensor<4xf32>, %c11: tensor<4xf32>, %c12: tensor<4xf32>, %c13: tensor<4xf32>, %c14: tensor<4xf32>, %c15: tensor<4xf32>, %c16: tensor<4xf32>):
    %n0 = "ember.mul"(%c0, %c1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %n1 = "ember.mul"(%c1, %c2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %n2 = "ember.mul"(%c2, %c3) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %n3 = "ember.mul"(%c3, %c4) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %n4 = "ember.mul"(%c4, %c5) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %n5 = "ember.mul"(%c5, %c6) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %n6 = "ember.mul"(%c6, %c7) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %n7 = "ember.mul"(%c7, %c8) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %n8 = "ember.mul"(%c8, %c9) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %n9 = "ember.mul"(%c9, %c10) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %n10 = "ember.mul"(%c10, %c11) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %n11 = "ember.mul"(%c11, %c12) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %n12 = "ember.mul"(%c12, %c13) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %n13 = "ember.mul"(%c13, %c14) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %n14 = "ember.mul"(%c14, %c15) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %n15 = "ember.mul"(%c15, %c16) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %n16 = "ember.mul"(%c16, %c0) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    "ember.yield"(%n0, %n1, %n2, %n3, %n4, %n5, %n6, %n7, %n8, %n9, %n10, %n11, %n12, %n13, %n14, %n15, %n16) : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> ()
  }) : (tensor<i32>, tensor<i32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  return %0#0 : tensor<4xf32>
}

// ember-unroll-loops: a host loop with a known trip count (20) and a small body runs 8
// bodies a trip (here 2 trips, the induction variable 3 + 8 j + u), then the original loop
// over the 4 trips left; loops with traced bounds, fewer than 16 trips or a trip over many
// elements keep their one body a trip.
// RUN: ember-opt %s --ember-unroll-loops | filecheck %s --check-prefix=UNROLL
// UNROLL-LABEL: func.func @unrolled
// UNROLL: %[[C0:.*]] = "ember.constant"() {value = dense<0> : tensor<i32>}
// UNROLL: %[[C2:.*]] = "ember.constant"() {value = dense<2> : tensor<i32>}
// UNROLL: %[[U:.*]] = "ember.for"(%[[C0]], %[[C2]], %arg0)
// UNROLL: ^bb0(%[[J:.*]]: tensor<i32>, %[[C:.*]]: tensor<16x4xf32>):
// UNROLL: "ember.mul"(%[[J]],
// UNROLL-COUNT-8: "ember.dynamic_update_slice"
// UNROLL-NOT: "ember.dynamic_update_slice"
// UNROLL: "ember.yield"
// UNROLL: %[[C19:.*]] = "ember.constant"() {value = dense<19> : tensor<i32>}
// UNROLL: "ember.for"(%[[C19]], %{{.*}}, %[[U]])
// UNROLL-COUNT-1: "ember.dynamic_update_slice"
// UNROLL-LABEL: func.func @traced_bounds
// UNROLL-COUNT-1: "ember.for"
// UNROLL-COUNT-1: "ember.dynamic_update_slice"
// UNROLL-LABEL: func.func @few_trips
// UNROLL-COUNT-1: "ember.for"
// UNROLL-COUNT-1: "ember.dynamic_update_slice"
// UNROLL-LABEL: func.func @large_trips
// UNROLL-COUNT-1: "ember.for"
// UNROLL-COUNT-1: "ember.mul"
// UNROLL-NOT: "ember.for"
func.func @unrolled(%x: tensor<16x4xf32>, %row: tensor<1x4xf32>) -> tensor<16x4xf32> {
  %lo = "ember.constant"() {value = dense<3> : tensor<i32>} : () -> tensor<i32>
  %hi = "ember.constant"() {value = dense<23> : tensor<i32>} : () -> tensor<i32>
  %0 = "ember.for"(%lo, %hi, %x) ({
  ^bb0(%i: tensor<i32>, %c: tensor<16x4xf32>):
    %zero = "ember.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    %next = "ember.dynamic_update_slice"(%c, %row, %i, %zero) {strides = array<i64: 1, 1>} : (tensor<16x4xf32>, tensor<1x4xf32>, tensor<i32>, tensor<i32>) -> tensor<16x4xf32>
    "ember.yield"(%next) : (tensor<16x4xf32>) -> ()
  }) : (tensor<i32>, tensor<i32>, tensor<16x4xf32>) -> tensor<16x4xf32>
  return %0 : tensor<16x4xf32>
}
func.func @traced_bounds(%hi: tensor<i32>, %x: tensor<16x4xf32>, %row: tensor<1x4xf32>) -> tensor<16x4xf32> {
  %lo = "ember.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %0 = "ember.for"(%lo, %hi, %x) ({
  ^bb0(%i: tensor<i32>, %c: tensor<16x4xf32>):
    %next = "ember.dynamic_update_slice"(%c, %row, %i, %lo) {strides = array<i64: 1, 1>} : (tensor<16x4xf32>, tensor<1x4xf32>, tensor<i32>, tensor<i32>) -> tensor<16x4xf32>
    "ember.yield"(%next) : (tensor<16x4xf32>) -> ()
  }) : (tensor<i32>, tensor<i32>, tensor<16x4xf32>) -> tensor<16x4xf32>
  return %0 : tensor<16x4xf32>
}
func.func @few_trips(%x: tensor<16x4xf32>, %row: tensor<1x4xf32>) -> tensor<16x4xf32> {
  %lo = "ember.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %hi = "ember.constant"() {value = dense<15> : tensor<i32>} : () -> tensor<i32>
  %0 = "ember.for"(%lo, %hi, %x) ({
  ^bb0(%i: tensor<i32>, %c: tensor<16x4xf32>):
    %next = "ember.dynamic_update_slice"(%c, %row, %i, %lo) {strides = array<i64: 1, 1>} : (tensor<16x4xf32>, tensor<1x4xf32>, tensor<i32>, tensor<i32>) -> tensor<16x4xf32>
    "ember.yield"(%next) : (tensor<16x4xf32>) -> ()
  }) : (tensor<i32>, tensor<i32>, tensor<16x4xf32>) -> tensor<16x4xf32>
  return %0 : tensor<16x4xf32>
}
func.func @large_trips(%x: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %lo = "ember.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %hi = "ember.constant"() {value = dense<100> : tensor<i32>} : () -> tensor<i32>
  %0 = "ember.for"(%lo, %hi, %x) ({
  ^bb0(%i: tensor<i32>, %c: tensor<256x256xf32>):
    %next = "ember.mul"(%c, %c) : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
    "ember.yield"(%next) : (tensor<256x256xf32>) -> ()
  }) : (tensor<i32>, tensor<i32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  return %0 : tensor<256x256xf32>
}
