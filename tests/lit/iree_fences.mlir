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

// A transpose of one of a generic's several results reads it through a barrier (IREE 3.13's
// transpose propagation made a generic yielding more values than it has outputs).
// CHECK-LABEL: func.func @transposed_result_of_several
// CHECK: %[[R:.*]]:2 = linalg.generic
// CHECK: %[[B:.*]] = util.optimization_barrier %[[R]]#1 : tensor<2x3xf32>
// CHECK: linalg.transpose ins(%[[B]]
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @transposed_result_of_several(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<3x2xf32>) {
  %0 = tensor.empty() : tensor<2x3xf32>
  %r:2 = linalg.generic {indexing_maps = [#map, #map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%a, %b : tensor<2x3xf32>, tensor<2x3xf32>) outs(%0, %0 : tensor<2x3xf32>, tensor<2x3xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32, %p: f32):
    %s = arith.subf %x, %y : f32
    %m = arith.mulf %s, %s : f32
    linalg.yield %m, %s : f32, f32
  } -> (tensor<2x3xf32>, tensor<2x3xf32>)
  %1 = tensor.empty() : tensor<3x2xf32>
  %t = linalg.transpose ins(%r#1 : tensor<2x3xf32>) outs(%1 : tensor<3x2xf32>) permutation = [1, 0]
  return %r#0, %t : tensor<2x3xf32>, tensor<3x2xf32>
}

// Must not fire: a transpose of a generic's only result.
// CHECK-LABEL: func.func @transposed_only_result
// CHECK-NOT: util.optimization_barrier
// CHECK: return
func.func @transposed_only_result(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = tensor.empty() : tensor<2x3xf32>
  %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<2x3xf32>) outs(%0 : tensor<2x3xf32>) {
  ^bb0(%x: f32, %o: f32):
    %m = arith.mulf %x, %x : f32
    linalg.yield %m : f32
  } -> tensor<2x3xf32>
  %1 = tensor.empty() : tensor<3x2xf32>
  %t = linalg.transpose ins(%r : tensor<2x3xf32>) outs(%1 : tensor<3x2xf32>) permutation = [1, 0]
  return %t : tensor<3x2xf32>
}
