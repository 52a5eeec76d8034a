// RUN: ember-opt %s --ember-iree-fences | filecheck %s

// A one-element slice expanded to a higher rank reads it through a barrier (IREE 3.13's
// BubbleUpExpandShapes made an invalid slice of it, or crashed).
// CHECK-LABEL: func.func @one_element
// CHECK: %[[S:.*]] = tensor.extract_slice
// CHECK: %[[B:.*]] = util.optimization_barrier %[[S]] : tensor<1x1xf32>
// CHECK: tensor.expand_shape %[[B]]
func.func @one_element(%a: tensor<3x3xf32>) -> tensor<1x1x1xf32> {
  %s = tensor.extract_slice %a[2, 0] [1, 1] [1, 1] : tensor<3x3xf32> to tensor<1x1xf32>
  %e = tensor.expand_shape %s [[0], [1, 2]] output_shape [1, 1, 1] : tensor<1x1xf32> into tensor<1x1x1xf32>
  return %e : tensor<1x1x1xf32>
}

// Must not fire: a slice of more than one element, a one-element value not sliced.
// CHECK-LABEL: func.func @longer_slice
// CHECK-NOT: util.optimization_barrier
// CHECK: return
func.func @longer_slice(%a: tensor<3x4xf32>) -> tensor<1x1x4xf32> {
  %s = tensor.extract_slice %a[2, 0] [1, 4] [1, 1] : tensor<3x4xf32> to tensor<1x4xf32>
  %e = tensor.expand_shape %s [[0], [1, 2]] output_shape [1, 1, 4] : tensor<1x4xf32> into tensor<1x1x4xf32>
  return %e : tensor<1x1x4xf32>
}

// CHECK-LABEL: func.func @not_a_slice
// CHECK-NOT: util.optimization_barrier
// CHECK: return
func.func @not_a_slice(%a: tensor<1xf32>) -> tensor<1x1xf32> {
  %e = tensor.expand_shape %a [[0, 1]] output_shape [1, 1] : tensor<1xf32> into tensor<1x1xf32>
  return %e : tensor<1x1xf32>
}

// A host loop's results are read through a barrier each; a loop inside a kernel is not.
// CHECK-LABEL: func.func @host_loop
// CHECK: %[[L:.*]]:2 = scf.for
// CHECK-NOT: util.optimization_barrier
// CHECK: linalg.yield
// CHECK: %[[B0:.*]] = util.optimization_barrier %[[L]]#0
// CHECK: %[[B1:.*]] = util.optimization_barrier %[[L]]#1
// CHECK: return %[[B0]], %[[B1]]
func.func @host_loop(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %r:2 = scf.for %i = %c0 to %c3 step %c1 iter_args(%x = %a, %y = %b) -> (tensor<4xf32>, tensor<4xf32>) {
    %e = tensor.empty() : tensor<4xf32>
    %s = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %k = scf.for %j = %c0 to %c3 step %c1 iter_args(%v = %in) -> (f32) {
        %w = arith.mulf %v, %v : f32
        scf.yield %w : f32
      }
      linalg.yield %k : f32
    } -> tensor<4xf32>
    scf.yield %s, %y : tensor<4xf32>, tensor<4xf32>
  }
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}
