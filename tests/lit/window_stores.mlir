// RUN: ember-opt %s --ember-window-stores | filecheck %s
// RUN: ember-opt %s --ember-window-stores --ember-lower-to-linalg | filecheck %s --check-prefix=LINALG

// An elementwise fusion whose result is inserted into a window: one fusion ending in the
// insert, lowered to a flow.dispatch.region of the generic and the insert (IREE writes the
// window in place). Its other reader, after the insert, reads the window of the result.
// CHECK-LABEL: func.func @stencil
// CHECK: %[[W:.*]] = "ember.fusion"(%{{.*}}, %{{.*}}, %arg1, %{{.*}})
// CHECK: "ember.add"
// CHECK: "ember.mul"
// CHECK: %[[I:.*]] = "ember.dynamic_update_slice"
// CHECK: "ember.yield"(%[[I]])
// CHECK: %[[S:.*]] = "ember.dynamic_slice"(%[[W]]
// CHECK-NOT: "ember.dynamic_update_slice"
// CHECK: "ember.neg"(%[[S]])
// LINALG-LABEL: func.func @stencil
// LINALG: flow.dispatch.region -> (tensor<6x6xf32>)
// LINALG: linalg.generic
// LINALG: tensor.insert_slice %{{.*}} into %arg1[{{.*}}] [4, 4] [1, 1]
// LINALG: flow.return
func.func @stencil(%a: tensor<6x6xf32>, %b: tensor<6x6xf32>) -> (tensor<6x6xf32>, tensor<4x4xf32>) {
  %one = "ember.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
  %l = "ember.slice"(%a) {start_indices = array<i64: 1, 0>, limit_indices = array<i64: 5, 4>, strides = array<i64: 1, 1>} : (tensor<6x6xf32>) -> tensor<4x4xf32>
  %r = "ember.slice"(%a) {start_indices = array<i64: 1, 2>, limit_indices = array<i64: 5, 6>, strides = array<i64: 1, 1>} : (tensor<6x6xf32>) -> tensor<4x4xf32>
  %half = "ember.constant"() {value = dense<0.5> : tensor<4x4xf32>} : () -> tensor<4x4xf32>
  %f = "ember.fusion"(%l, %r, %half) ({
  ^bb0(%x: tensor<4x4xf32>, %y: tensor<4x4xf32>, %h: tensor<4x4xf32>):
    %s = "ember.add"(%x, %y) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    %m = "ember.mul"(%s, %h) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    "ember.yield"(%m) : (tensor<4x4xf32>) -> ()
  }) : (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %u = "ember.dynamic_update_slice"(%b, %f, %one, %one) {strides = array<i64: 1, 1>} : (tensor<6x6xf32>, tensor<4x4xf32>, tensor<i32>, tensor<i32>) -> tensor<6x6xf32>
  %n = "ember.neg"(%f) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %u, %n : tensor<6x6xf32>, tensor<4x4xf32>
}

// A single elementwise op joins its insert too.
// CHECK-LABEL: func.func @single
// CHECK: "ember.fusion"
// CHECK: "ember.exp"
// CHECK: "ember.dynamic_update_slice"
// CHECK: "ember.yield"
func.func @single(%a: tensor<4x4xf32>, %b: tensor<6x6xf32>) -> tensor<6x6xf32> {
  %one = "ember.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
  %e = "ember.exp"(%a) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %u = "ember.dynamic_update_slice"(%b, %e, %one, %one) {strides = array<i64: 1, 1>} : (tensor<6x6xf32>, tensor<4x4xf32>, tensor<i32>, tensor<i32>) -> tensor<6x6xf32>
  return %u : tensor<6x6xf32>
}

// Where it must not fire: the update computed from a view of the destination (its other
// workgroups would write what one reads), run-time starts, a unit dim, the destination read
// after the insert, the update read before it, and an update that is not elementwise.
// CHECK-LABEL: func.func @from_the_destination
// CHECK-NOT: "ember.fusion"
// CHECK: "ember.dynamic_update_slice"(%arg0, %{{.*}}, %{{.*}}, %{{.*}})
// LINALG-LABEL: func.func @from_the_destination
// LINALG-NOT: flow.dispatch.region
// LINALG: return
func.func @from_the_destination(%b: tensor<6x6xf32>) -> tensor<6x6xf32> {
  %one = "ember.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
  %v = "ember.slice"(%b) {start_indices = array<i64: 0, 0>, limit_indices = array<i64: 4, 4>, strides = array<i64: 1, 1>} : (tensor<6x6xf32>) -> tensor<4x4xf32>
  %e = "ember.exp"(%v) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %u = "ember.dynamic_update_slice"(%b, %e, %one, %one) {strides = array<i64: 1, 1>} : (tensor<6x6xf32>, tensor<4x4xf32>, tensor<i32>, tensor<i32>) -> tensor<6x6xf32>
  return %u : tensor<6x6xf32>
}

// CHECK-LABEL: func.func @run_time_start
// CHECK-NOT: "ember.fusion"
// CHECK: "ember.dynamic_update_slice"
func.func @run_time_start(%a: tensor<4x4xf32>, %b: tensor<6x6xf32>, %i: tensor<i32>) -> tensor<6x6xf32> {
  %e = "ember.exp"(%a) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %u = "ember.dynamic_update_slice"(%b, %e, %i, %i) {strides = array<i64: 1, 1>} : (tensor<6x6xf32>, tensor<4x4xf32>, tensor<i32>, tensor<i32>) -> tensor<6x6xf32>
  return %u : tensor<6x6xf32>
}

// CHECK-LABEL: func.func @unit_dim
// CHECK-NOT: "ember.fusion"
// CHECK: "ember.dynamic_update_slice"
func.func @unit_dim(%a: tensor<1x4xf32>, %b: tensor<6x6xf32>) -> tensor<6x6xf32> {
  %one = "ember.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
  %e = "ember.exp"(%a) : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %u = "ember.dynamic_update_slice"(%b, %e, %one, %one) {strides = array<i64: 1, 1>} : (tensor<6x6xf32>, tensor<1x4xf32>, tensor<i32>, tensor<i32>) -> tensor<6x6xf32>
  return %u : tensor<6x6xf32>
}

// CHECK-LABEL: func.func @destination_read_after
// CHECK-NOT: "ember.fusion"
// CHECK: "ember.dynamic_update_slice"
func.func @destination_read_after(%a: tensor<4x4xf32>, %b: tensor<6x6xf32>) -> (tensor<6x6xf32>, tensor<6x6xf32>) {
  %one = "ember.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
  %e = "ember.exp"(%a) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %u = "ember.dynamic_update_slice"(%b, %e, %one, %one) {strides = array<i64: 1, 1>} : (tensor<6x6xf32>, tensor<4x4xf32>, tensor<i32>, tensor<i32>) -> tensor<6x6xf32>
  %n = "ember.neg"(%b) : (tensor<6x6xf32>) -> tensor<6x6xf32>
  return %u, %n : tensor<6x6xf32>, tensor<6x6xf32>
}

// CHECK-LABEL: func.func @update_read_before
// CHECK-NOT: "ember.fusion"
// CHECK: "ember.dynamic_update_slice"
func.func @update_read_before(%a: tensor<4x4xf32>, %b: tensor<6x6xf32>) -> (tensor<6x6xf32>, tensor<4x4xf32>) {
  %one = "ember.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
  %e = "ember.exp"(%a) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %n = "ember.neg"(%e) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %u = "ember.dynamic_update_slice"(%b, %e, %one, %one) {strides = array<i64: 1, 1>} : (tensor<6x6xf32>, tensor<4x4xf32>, tensor<i32>, tensor<i32>) -> tensor<6x6xf32>
  return %u, %n : tensor<6x6xf32>, tensor<4x4xf32>
}

// CHECK-LABEL: func.func @not_elementwise
// CHECK-NOT: "ember.fusion"
// CHECK: "ember.dynamic_update_slice"
func.func @not_elementwise(%a: tensor<4x4xf32>, %b: tensor<6x6xf32>) -> tensor<6x6xf32> {
  %one = "ember.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
  %t = "ember.transpose"(%a) {permutation = array<i64: 1, 0>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %u = "ember.dynamic_update_slice"(%b, %t, %one, %one) {strides = array<i64: 1, 1>} : (tensor<6x6xf32>, tensor<4x4xf32>, tensor<i32>, tensor<i32>) -> tensor<6x6xf32>
  return %u : tensor<6x6xf32>
}

// The update is the destination itself (x.at[:].set(x)): the fusion would read the value
// it replaces (a use before its definition).
// CHECK-LABEL: func.func @update_is_the_destination
// CHECK-NOT: "ember.fusion"
// CHECK: "ember.dynamic_update_slice"(%[[E:.*]], %[[E]]
func.func @update_is_the_destination(%a: tensor<4xf32>) -> tensor<4xf32> {
  %zero = "ember.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %e = "ember.exp"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %u = "ember.dynamic_update_slice"(%e, %e, %zero) {strides = array<i64: 1>} : (tensor<4xf32>, tensor<4xf32>, tensor<i32>) -> tensor<4xf32>
  return %u : tensor<4xf32>
}
