// RUN: ember-opt %s --verify-ember --verify-diagnostics
// A wrong expectation makes the check fail:
// RUN: sed 's/requires result type/requires nothing/' %s > %t.mlir
// RUN: not ember-opt %t.mlir --verify-ember --verify-diagnostics 2>&1 | filecheck %s
// CHECK: error: expected error "ember.exp requires nothing tensor<3xf32>, got tensor<4xf32>" was not produced
// CHECK: error: unexpected error: 'ember.exp' op ember.exp requires result type

func.func @f(%x: tensor<3xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{ember.exp requires result type tensor<3xf32>, got tensor<4xf32>}}
  %0 = "ember.exp"(%x) : (tensor<3xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// Region checks: what a region yields must match the op's results.
func.func @g(%p: tensor<i1>, %x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{ember.if requires region 1 to yield (tensor<3xf32>), got (tensor<i1>)}}
  %0 = "ember.if"(%p) ({
    "ember.yield"(%x) : (tensor<3xf32>) -> ()
  }, {
    "ember.yield"(%p) : (tensor<i1>) -> ()
  }) : (tensor<i1>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
