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
