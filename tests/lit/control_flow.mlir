// RUN: ember-opt %s --ember-lower-to-linalg | filecheck %s
// RUN: ember-opt %s --ember-lower-to-linalg -p inline,symbol-dce | filecheck %s --check-prefix=INLINED

// ember.cond calls its branches from the regions of an scf.if: branches[1] when true.
// CHECK-LABEL: func.func private @on_false
// CHECK-LABEL: func.func @main
// CHECK: %[[P:.*]] = tensor.extract %arg0[] : tensor<i1>
// CHECK: scf.if %[[P]] -> (tensor<3xf32>)
// CHECK: func.call @on_true(%arg1, %arg2)
// CHECK: } else {
// CHECK: func.call @on_false(%arg1)
// ember.while calls cond and body from an scf.while.
// CHECK: scf.while
// CHECK: func.call @keep_going
// CHECK: scf.condition
// CHECK: } do {
// CHECK: func.call @step
// INLINED-NOT: func.call
// INLINED-NOT: @on_true
// INLINED: scf.if
// INLINED: scf.while
func.func private @on_false(%x: tensor<3xf32>) -> tensor<3xf32> {
  return %x : tensor<3xf32>
}
func.func private @on_true(%x: tensor<3xf32>, %captured: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "ember.add"(%x, %captured) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func private @keep_going(%i: tensor<i32>) -> tensor<i1> {
  %ten = "ember.constant"() {value = dense<10> : tensor<i32>} : () -> tensor<i32>
  %0 = "ember.compare"(%i, %ten) {direction = "LT"} : (tensor<i32>, tensor<i32>) -> tensor<i1>
  return %0 : tensor<i1>
}
func.func private @step(%i: tensor<i32>) -> tensor<i32> {
  %one = "ember.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
  %0 = "ember.add"(%i, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
  return %0 : tensor<i32>
}
func.func @main(%p: tensor<i1>, %x: tensor<3xf32>, %y: tensor<3xf32>, %n: tensor<i32>) -> (tensor<3xf32>, tensor<i32>) {
  %0 = "ember.cond"(%p, %x, %y) {branches = [@on_false, @on_true], captures = array<i64: 0, 1>} : (tensor<i1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %1 = "ember.while"(%n) {functions = [@keep_going, @step], captures = array<i64: 0, 0>} : (tensor<i32>) -> tensor<i32>
  return %0, %1 : tensor<3xf32>, tensor<i32>
}
