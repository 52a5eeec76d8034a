// RUN: ember-opt %s --ember-reroll | filecheck %s

// Eleven steps of x = sin(x) * k + b, traced from a Python loop: one ember.for of one step,
// the first step reading the argument as its carry's first value, k and b read from outside.
// CHECK-LABEL: func.func @unrolled_steps
// CHECK: %[[LO:.*]] = "ember.constant"() {value = dense<0> : tensor<i32>}
// CHECK: %[[HI:.*]] = "ember.constant"() {value = dense<11> : tensor<i32>}
// CHECK: %[[LOOP:.*]] = "ember.for"(%[[LO]], %[[HI]], %arg0)
// CHECK: ^bb0(%{{.*}}: tensor<i32>, %[[C:.*]]: tensor<4xf32>):
// CHECK: %[[S:.*]] = "ember.sin"(%[[C]])
// CHECK: %[[M:.*]] = "ember.mul"(%[[S]], %arg1)
// CHECK: %[[A:.*]] = "ember.add"(%[[M]], %arg2)
// CHECK: "ember.yield"(%[[A]])
// CHECK-NOT: ember.sin
// CHECK: return %[[LOOP]]
func.func @unrolled_steps(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>, %arg2: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "ember.sin"(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "ember.mul"(%0, %arg1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = "ember.add"(%1, %arg2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %3 = "ember.sin"(%2) : (tensor<4xf32>) -> tensor<4xf32>
  %4 = "ember.mul"(%3, %arg1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %5 = "ember.add"(%4, %arg2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %6 = "ember.sin"(%5) : (tensor<4xf32>) -> tensor<4xf32>
  %7 = "ember.mul"(%6, %arg1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %8 = "ember.add"(%7, %arg2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %9 = "ember.sin"(%8) : (tensor<4xf32>) -> tensor<4xf32>
  %10 = "ember.mul"(%9, %arg1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %11 = "ember.add"(%10, %arg2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %12 = "ember.sin"(%11) : (tensor<4xf32>) -> tensor<4xf32>
  %13 = "ember.mul"(%12, %arg1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %14 = "ember.add"(%13, %arg2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %15 = "ember.sin"(%14) : (tensor<4xf32>) -> tensor<4xf32>
  %16 = "ember.mul"(%15, %arg1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %17 = "ember.add"(%16, %arg2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %18 = "ember.sin"(%17) : (tensor<4xf32>) -> tensor<4xf32>
  %19 = "ember.mul"(%18, %arg1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %20 = "ember.add"(%19, %arg2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %21 = "ember.sin"(%20) : (tensor<4xf32>) -> tensor<4xf32>
  %22 = "ember.mul"(%21, %arg1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %23 = "ember.add"(%22, %arg2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %24 = "ember.sin"(%23) : (tensor<4xf32>) -> tensor<4xf32>
  %25 = "ember.mul"(%24, %arg1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %26 = "ember.add"(%25, %arg2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %27 = "ember.sin"(%26) : (tensor<4xf32>) -> tensor<4xf32>
  %28 = "ember.mul"(%27, %arg1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %29 = "ember.add"(%28, %arg2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %30 = "ember.sin"(%29) : (tensor<4xf32>) -> tensor<4xf32>
  %31 = "ember.mul"(%30, %arg1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %32 = "ember.add"(%31, %arg2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %32 : tensor<4xf32>
}

// x, y = y, tanh(x + y): each step reads the two before it, so a trip is two steps with
// two carries.
// CHECK-LABEL: func.func @two_carries
// CHECK: dense<8> : tensor<i32>
// CHECK: %[[LOOP:.*]]:2 = "ember.for"(%{{.*}}, %{{.*}}, %arg0, %arg1)
// CHECK: ^bb0(%{{.*}}: tensor<i32>, %[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>):
// CHECK: %[[S1:.*]] = "ember.add"(%[[X]], %[[Y]])
// CHECK: %[[T1:.*]] = "ember.tanh"(%[[S1]])
// CHECK: %[[S2:.*]] = "ember.add"(%[[Y]], %[[T1]])
// CHECK: %[[T2:.*]] = "ember.tanh"(%[[S2]])
// CHECK: "ember.yield"(%[[T1]], %[[T2]])
// CHECK-NOT: ember.tanh
// CHECK: return %[[LOOP]]#1
func.func @two_carries(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "ember.add"(%arg0, %arg1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = "ember.tanh"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = "ember.add"(%arg1, %1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %3 = "ember.tanh"(%2) : (tensor<4xf32>) -> tensor<4xf32>
  %4 = "ember.add"(%1, %3) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %5 = "ember.tanh"(%4) : (tensor<4xf32>) -> tensor<4xf32>
  %6 = "ember.add"(%3, %5) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %7 = "ember.tanh"(%6) : (tensor<4xf32>) -> tensor<4xf32>
  %8 = "ember.add"(%5, %7) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %9 = "ember.tanh"(%8) : (tensor<4xf32>) -> tensor<4xf32>
  %10 = "ember.add"(%7, %9) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %11 = "ember.tanh"(%10) : (tensor<4xf32>) -> tensor<4xf32>
  %12 = "ember.add"(%9, %11) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %13 = "ember.tanh"(%12) : (tensor<4xf32>) -> tensor<4xf32>
  %14 = "ember.add"(%11, %13) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %15 = "ember.tanh"(%14) : (tensor<4xf32>) -> tensor<4xf32>
  %16 = "ember.add"(%13, %15) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %17 = "ember.tanh"(%16) : (tensor<4xf32>) -> tensor<4xf32>
  %18 = "ember.add"(%15, %17) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %19 = "ember.tanh"(%18) : (tensor<4xf32>) -> tensor<4xf32>
  %20 = "ember.add"(%17, %19) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %21 = "ember.tanh"(%20) : (tensor<4xf32>) -> tensor<4xf32>
  %22 = "ember.add"(%19, %21) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %23 = "ember.tanh"(%22) : (tensor<4xf32>) -> tensor<4xf32>
  %24 = "ember.add"(%21, %23) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %25 = "ember.tanh"(%24) : (tensor<4xf32>) -> tensor<4xf32>
  %26 = "ember.add"(%23, %25) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %27 = "ember.tanh"(%26) : (tensor<4xf32>) -> tensor<4xf32>
  %28 = "ember.add"(%25, %27) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %29 = "ember.tanh"(%28) : (tensor<4xf32>) -> tensor<4xf32>
  %30 = "ember.add"(%27, %29) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %31 = "ember.tanh"(%30) : (tensor<4xf32>) -> tensor<4xf32>
  return %31 : tensor<4xf32>
}

// Must not fire: seven steps (fewer than REROLL_MIN_TRIPS) stay unrolled.
// CHECK-LABEL: func.func @too_few_trips
// CHECK-NOT: ember.for
// CHECK-COUNT-7: ember.sin
// CHECK: return
func.func @too_few_trips(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>, %arg2: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "ember.sin"(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "ember.mul"(%0, %arg1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = "ember.add"(%1, %arg2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %3 = "ember.tanh"(%2) : (tensor<4xf32>) -> tensor<4xf32>
  %4 = "ember.sub"(%3, %arg2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %5 = "ember.sin"(%4) : (tensor<4xf32>) -> tensor<4xf32>
  %6 = "ember.mul"(%5, %arg1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %7 = "ember.add"(%6, %arg2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %8 = "ember.tanh"(%7) : (tensor<4xf32>) -> tensor<4xf32>
  %9 = "ember.sub"(%8, %arg2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %10 = "ember.sin"(%9) : (tensor<4xf32>) -> tensor<4xf32>
  %11 = "ember.mul"(%10, %arg1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %12 = "ember.add"(%11, %arg2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %13 = "ember.tanh"(%12) : (tensor<4xf32>) -> tensor<4xf32>
  %14 = "ember.sub"(%13, %arg2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %15 = "ember.sin"(%14) : (tensor<4xf32>) -> tensor<4xf32>
  %16 = "ember.mul"(%15, %arg1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %17 = "ember.add"(%16, %arg2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %18 = "ember.tanh"(%17) : (tensor<4xf32>) -> tensor<4xf32>
  %19 = "ember.sub"(%18, %arg2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %20 = "ember.sin"(%19) : (tensor<4xf32>) -> tensor<4xf32>
  %21 = "ember.mul"(%20, %arg1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %22 = "ember.add"(%21, %arg2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %23 = "ember.tanh"(%22) : (tensor<4xf32>) -> tensor<4xf32>
  %24 = "ember.sub"(%23, %arg2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %25 = "ember.sin"(%24) : (tensor<4xf32>) -> tensor<4xf32>
  %26 = "ember.mul"(%25, %arg1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %27 = "ember.add"(%26, %arg2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %28 = "ember.tanh"(%27) : (tensor<4xf32>) -> tensor<4xf32>
  %29 = "ember.sub"(%28, %arg2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %30 = "ember.sin"(%29) : (tensor<4xf32>) -> tensor<4xf32>
  %31 = "ember.mul"(%30, %arg1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %32 = "ember.add"(%31, %arg2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %33 = "ember.tanh"(%32) : (tensor<4xf32>) -> tensor<4xf32>
  %34 = "ember.sub"(%33, %arg2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %34 : tensor<4xf32>
}

// Must not fire: each step multiplies by another constant (1 + i), so no two are alike.
// CHECK-LABEL: func.func @other_constants
// CHECK-NOT: ember.for
// CHECK-COUNT-9: ember.sin
// CHECK: return
func.func @other_constants(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "ember.sin"(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "ember.constant"() {value = dense<1.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %2 = "ember.broadcast_in_dim"(%1) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4xf32>
  %3 = "ember.mul"(%0, %2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %4 = "ember.sin"(%3) : (tensor<4xf32>) -> tensor<4xf32>
  %5 = "ember.constant"() {value = dense<2.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %6 = "ember.broadcast_in_dim"(%5) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4xf32>
  %7 = "ember.mul"(%4, %6) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %8 = "ember.sin"(%7) : (tensor<4xf32>) -> tensor<4xf32>
  %9 = "ember.constant"() {value = dense<3.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %10 = "ember.broadcast_in_dim"(%9) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4xf32>
  %11 = "ember.mul"(%8, %10) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %12 = "ember.sin"(%11) : (tensor<4xf32>) -> tensor<4xf32>
  %13 = "ember.constant"() {value = dense<4.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %14 = "ember.broadcast_in_dim"(%13) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4xf32>
  %15 = "ember.mul"(%12, %14) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %16 = "ember.sin"(%15) : (tensor<4xf32>) -> tensor<4xf32>
  %17 = "ember.constant"() {value = dense<5.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %18 = "ember.broadcast_in_dim"(%17) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4xf32>
  %19 = "ember.mul"(%16, %18) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %20 = "ember.sin"(%19) : (tensor<4xf32>) -> tensor<4xf32>
  %21 = "ember.constant"() {value = dense<6.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %22 = "ember.broadcast_in_dim"(%21) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4xf32>
  %23 = "ember.mul"(%20, %22) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %24 = "ember.sin"(%23) : (tensor<4xf32>) -> tensor<4xf32>
  %25 = "ember.constant"() {value = dense<7.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %26 = "ember.broadcast_in_dim"(%25) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4xf32>
  %27 = "ember.mul"(%24, %26) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %28 = "ember.sin"(%27) : (tensor<4xf32>) -> tensor<4xf32>
  %29 = "ember.constant"() {value = dense<8.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %30 = "ember.broadcast_in_dim"(%29) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4xf32>
  %31 = "ember.mul"(%28, %30) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %32 = "ember.sin"(%31) : (tensor<4xf32>) -> tensor<4xf32>
  %33 = "ember.constant"() {value = dense<9.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %34 = "ember.broadcast_in_dim"(%33) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4xf32>
  %35 = "ember.mul"(%32, %34) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %35 : tensor<4xf32>
}

// Must not fire: the fourth step's value is returned, and a loop keeps only its last
// trip's (the steps after it are too few for a loop of their own).
// CHECK-LABEL: func.func @middle_step_used
// CHECK-NOT: ember.for
// CHECK-COUNT-11: ember.sin
// CHECK: return
func.func @middle_step_used(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>, %arg2: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = "ember.sin"(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "ember.mul"(%0, %arg1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = "ember.add"(%1, %arg2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %3 = "ember.sin"(%2) : (tensor<4xf32>) -> tensor<4xf32>
  %4 = "ember.mul"(%3, %arg1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %5 = "ember.add"(%4, %arg2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %6 = "ember.sin"(%5) : (tensor<4xf32>) -> tensor<4xf32>
  %7 = "ember.mul"(%6, %arg1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %8 = "ember.add"(%7, %arg2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %9 = "ember.sin"(%8) : (tensor<4xf32>) -> tensor<4xf32>
  %10 = "ember.mul"(%9, %arg1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %11 = "ember.add"(%10, %arg2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %12 = "ember.sin"(%11) : (tensor<4xf32>) -> tensor<4xf32>
  %13 = "ember.mul"(%12, %arg1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %14 = "ember.add"(%13, %arg2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %15 = "ember.sin"(%14) : (tensor<4xf32>) -> tensor<4xf32>
  %16 = "ember.mul"(%15, %arg1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %17 = "ember.add"(%16, %arg2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %18 = "ember.sin"(%17) : (tensor<4xf32>) -> tensor<4xf32>
  %19 = "ember.mul"(%18, %arg1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %20 = "ember.add"(%19, %arg2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %21 = "ember.sin"(%20) : (tensor<4xf32>) -> tensor<4xf32>
  %22 = "ember.mul"(%21, %arg1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %23 = "ember.add"(%22, %arg2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %24 = "ember.sin"(%23) : (tensor<4xf32>) -> tensor<4xf32>
  %25 = "ember.mul"(%24, %arg1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %26 = "ember.add"(%25, %arg2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %27 = "ember.sin"(%26) : (tensor<4xf32>) -> tensor<4xf32>
  %28 = "ember.mul"(%27, %arg1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %29 = "ember.add"(%28, %arg2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %30 = "ember.sin"(%29) : (tensor<4xf32>) -> tensor<4xf32>
  %31 = "ember.mul"(%30, %arg1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %32 = "ember.add"(%31, %arg2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %32, %11 : tensor<4xf32>, tensor<4xf32>
}

// Must not fire: a step with a reduction would be a loop the host runs, a submission a trip
// that the unrolled chain does not pay.
// CHECK-LABEL: func.func @not_a_kernel
// CHECK-NOT: ember.for
// CHECK-COUNT-12: ember.sin
// CHECK: return
func.func @not_a_kernel(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "ember.sin"(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "ember.reduce_sum"(%arg0) {axes = array<i64: 0>} : (tensor<4xf32>) -> tensor<f32>
  %2 = "ember.broadcast_in_dim"(%1) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4xf32>
  %3 = "ember.sub"(%0, %2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %4 = "ember.sin"(%3) : (tensor<4xf32>) -> tensor<4xf32>
  %5 = "ember.reduce_sum"(%3) {axes = array<i64: 0>} : (tensor<4xf32>) -> tensor<f32>
  %6 = "ember.broadcast_in_dim"(%5) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4xf32>
  %7 = "ember.sub"(%4, %6) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %8 = "ember.sin"(%7) : (tensor<4xf32>) -> tensor<4xf32>
  %9 = "ember.reduce_sum"(%7) {axes = array<i64: 0>} : (tensor<4xf32>) -> tensor<f32>
  %10 = "ember.broadcast_in_dim"(%9) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4xf32>
  %11 = "ember.sub"(%8, %10) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %12 = "ember.sin"(%11) : (tensor<4xf32>) -> tensor<4xf32>
  %13 = "ember.reduce_sum"(%11) {axes = array<i64: 0>} : (tensor<4xf32>) -> tensor<f32>
  %14 = "ember.broadcast_in_dim"(%13) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4xf32>
  %15 = "ember.sub"(%12, %14) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %16 = "ember.sin"(%15) : (tensor<4xf32>) -> tensor<4xf32>
  %17 = "ember.reduce_sum"(%15) {axes = array<i64: 0>} : (tensor<4xf32>) -> tensor<f32>
  %18 = "ember.broadcast_in_dim"(%17) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4xf32>
  %19 = "ember.sub"(%16, %18) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %20 = "ember.sin"(%19) : (tensor<4xf32>) -> tensor<4xf32>
  %21 = "ember.reduce_sum"(%19) {axes = array<i64: 0>} : (tensor<4xf32>) -> tensor<f32>
  %22 = "ember.broadcast_in_dim"(%21) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4xf32>
  %23 = "ember.sub"(%20, %22) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %24 = "ember.sin"(%23) : (tensor<4xf32>) -> tensor<4xf32>
  %25 = "ember.reduce_sum"(%23) {axes = array<i64: 0>} : (tensor<4xf32>) -> tensor<f32>
  %26 = "ember.broadcast_in_dim"(%25) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4xf32>
  %27 = "ember.sub"(%24, %26) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %28 = "ember.sin"(%27) : (tensor<4xf32>) -> tensor<4xf32>
  %29 = "ember.reduce_sum"(%27) {axes = array<i64: 0>} : (tensor<4xf32>) -> tensor<f32>
  %30 = "ember.broadcast_in_dim"(%29) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4xf32>
  %31 = "ember.sub"(%28, %30) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %32 = "ember.sin"(%31) : (tensor<4xf32>) -> tensor<4xf32>
  %33 = "ember.reduce_sum"(%31) {axes = array<i64: 0>} : (tensor<4xf32>) -> tensor<f32>
  %34 = "ember.broadcast_in_dim"(%33) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4xf32>
  %35 = "ember.sub"(%32, %34) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %36 = "ember.sin"(%35) : (tensor<4xf32>) -> tensor<4xf32>
  %37 = "ember.reduce_sum"(%35) {axes = array<i64: 0>} : (tensor<4xf32>) -> tensor<f32>
  %38 = "ember.broadcast_in_dim"(%37) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4xf32>
  %39 = "ember.sub"(%36, %38) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %40 = "ember.sin"(%39) : (tensor<4xf32>) -> tensor<4xf32>
  %41 = "ember.reduce_sum"(%39) {axes = array<i64: 0>} : (tensor<4xf32>) -> tensor<f32>
  %42 = "ember.broadcast_in_dim"(%41) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4xf32>
  %43 = "ember.sub"(%40, %42) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %44 = "ember.sin"(%43) : (tensor<4xf32>) -> tensor<4xf32>
  %45 = "ember.reduce_sum"(%43) {axes = array<i64: 0>} : (tensor<4xf32>) -> tensor<f32>
  %46 = "ember.broadcast_in_dim"(%45) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4xf32>
  %47 = "ember.sub"(%44, %46) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %47 : tensor<4xf32>
}
