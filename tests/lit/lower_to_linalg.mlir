// RUN: ember-opt %s --ember-lower-to-linalg | filecheck %s

// Elementwise ops become linalg.generic with the op table's scalar body.
// CHECK-LABEL: func.func @elementwise
// CHECK: linalg.generic
// CHECK: arith.addf
// CHECK-NOT: ember.
func.func @elementwise(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "ember.add"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// Unsigned integers become signless, and comparisons pick the unsigned predicate.
// CHECK-LABEL: func.func @unsigned
// CHECK-SAME: (%{{.*}}: tensor<3xi32>, %{{.*}}: tensor<3xi32>) -> tensor<3xi1>
// CHECK: arith.cmpi ult
func.func @unsigned(%x: tensor<3xui32>, %y: tensor<3xui32>) -> tensor<3xi1> {
  %0 = "ember.compare"(%x, %y) {direction = "LT"} : (tensor<3xui32>, tensor<3xui32>) -> tensor<3xi1>
  return %0 : tensor<3xi1>
}

// A plain 2-D float contraction is linalg.matmul (IREE's fast path); others are generics.
// CHECK-LABEL: func.func @contractions
// CHECK: linalg.matmul
// CHECK-NOT: arith.extf
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction"]
// CHECK-NOT: arith.truncf
func.func @contractions(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>, %c: tensor<2x3x4xf32>, %d: tensor<2x4x5xf32>) -> (tensor<3x5xf32>, tensor<2x3x5xf32>) {
  %0 = "ember.dot_general"(%a, %b) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  %1 = "ember.dot_general"(%c, %d) {lhs_batch = array<i64: 0>, lhs_contracting = array<i64: 2>, rhs_batch = array<i64: 0>, rhs_contracting = array<i64: 1>} : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  return %0, %1 : tensor<3x5xf32>, tensor<2x3x5xf32>
}

// A product over one element is an outer product: elementwise, no reduction loop and no
// linalg.matmul; a product over two elements keeps its reduction.
// CHECK-LABEL: func.func @outer_products
// CHECK-NOT: linalg.matmul
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel"]}
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: linalg.yield
// CHECK: iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK: linalg.matmul
func.func @outer_products(%a: tensor<3x1xf32>, %b: tensor<1x5xf32>, %c: tensor<2x3x1xf32>, %d: tensor<2x1x5xf32>, %e: tensor<3x2xf32>, %f: tensor<2x5xf32>) -> (tensor<3x5xf32>, tensor<2x3x5xf32>, tensor<3x5xf32>) {
  %0 = "ember.dot_general"(%a, %b) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<3x1xf32>, tensor<1x5xf32>) -> tensor<3x5xf32>
  %1 = "ember.dot_general"(%c, %d) {lhs_batch = array<i64: 0>, lhs_contracting = array<i64: 2>, rhs_batch = array<i64: 0>, rhs_contracting = array<i64: 1>} : (tensor<2x3x1xf32>, tensor<2x1x5xf32>) -> tensor<2x3x5xf32>
  %2 = "ember.dot_general"(%e, %f) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<3x2xf32>, tensor<2x5xf32>) -> tensor<3x5xf32>
  return %0, %1, %2 : tensor<3x5xf32>, tensor<2x3x5xf32>, tensor<3x5xf32>
}

// bf16 and f16 contractions accumulate in f32 and round once (as XLA); f32 ones do not
// convert at all (@contractions above has neither extf nor truncf).
// CHECK-LABEL: func.func @narrow_contractions
// CHECK: linalg.matmul ins({{.*}} : tensor<3x4xbf16>, tensor<4x5xbf16>) outs({{.*}} : tensor<3x5xf32>)
// CHECK: arith.truncf {{.*}} : f32 to bf16
// CHECK: arith.extf {{.*}} : f16 to f32
// CHECK: arith.mulf {{.*}} : f32
// CHECK: arith.truncf {{.*}} : f32 to f16
// CHECK-NOT: arith.extf
func.func @narrow_contractions(%a: tensor<3x4xbf16>, %b: tensor<4x5xbf16>, %c: tensor<2x3x4xf16>, %d: tensor<2x4x5xf16>) -> (tensor<3x5xbf16>, tensor<2x3x5xf16>) {
  %0 = "ember.dot_general"(%a, %b) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<3x4xbf16>, tensor<4x5xbf16>) -> tensor<3x5xbf16>
  %1 = "ember.dot_general"(%c, %d) {lhs_batch = array<i64: 0>, lhs_contracting = array<i64: 2>, rhs_batch = array<i64: 0>, rhs_contracting = array<i64: 1>} : (tensor<2x3x4xf16>, tensor<2x4x5xf16>) -> tensor<2x3x5xf16>
  return %0, %1 : tensor<3x5xbf16>, tensor<2x3x5xf16>
}

// Reductions fill the identity (-inf for max) and reduce the listed axes.
// CHECK-LABEL: func.func @reduce
// CHECK: arith.constant 0xFF800000 : f32
// CHECK: linalg.fill
// CHECK: iterator_types = ["parallel", "reduction"]
// CHECK: arith.maximumf
func.func @reduce(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  %0 = "ember.reduce_max"(%x) {axes = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// float16 and bfloat16 sums and products accumulate in f32, rounded once (as jnp.sum's);
// other reductions (max here) and f32 sums keep their type.
// CHECK-LABEL: func.func @narrow_sums
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<2x3xf16>) outs(%{{.*}} : tensor<2xf32>)
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: arith.addf %{{.*}} : f32
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<2x3xbf16>) outs(%{{.*}} : tensor<2xf32>)
// CHECK: arith.mulf %{{.*}} : f32
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<2x3xf16>) outs(%{{.*}} : tensor<2xf16>)
// CHECK-NOT: arith.extf
// CHECK: arith.maximumf %{{.*}} : f16
// CHECK-NOT: arith.truncf
// CHECK: return
func.func @narrow_sums(%x: tensor<2x3xf16>, %y: tensor<2x3xbf16>) -> (tensor<2xf16>, tensor<2xbf16>, tensor<2xf16>) {
  %0 = "ember.reduce_sum"(%x) {axes = array<i64: 1>} : (tensor<2x3xf16>) -> tensor<2xf16>
  %1 = "ember.reduce_prod"(%y) {axes = array<i64: 1>} : (tensor<2x3xbf16>) -> tensor<2xbf16>
  %2 = "ember.reduce_max"(%x) {axes = array<i64: 1>} : (tensor<2x3xf16>) -> tensor<2xf16>
  return %0, %1, %2 : tensor<2xf16>, tensor<2xbf16>, tensor<2xf16>
}

// Symbolic dims (shape-polymorphic eager kernels) are named in the type's encoding: each
// size is read off the first argument that has it, results are allocated at those sizes,
// and upstream types carry plain `?`. A static dim stays static (no tensor.dim for the 4).
// CHECK-LABEL: func.func @symbolic
// CHECK-SAME: (%[[X:.*]]: tensor<?x4xf32>, %[[Y:.*]]: tensor<4xf32>) -> tensor<?x4xf32>
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[N:.*]] = tensor.dim %[[X]], %[[C0]] : tensor<?x4xf32>
// CHECK-NOT: tensor.dim
// CHECK: tensor.empty(%[[N]]) : tensor<?x4xf32>
// CHECK: tensor.empty(%[[N]]) : tensor<?x4xf32>
// CHECK-NOT: "s0"
func.func @symbolic(%x: tensor<?x4xf32, "s0">, %y: tensor<4xf32>) -> tensor<?x4xf32, "s0"> {
  %0 = "ember.broadcast_in_dim"(%y) {broadcast_dimensions = array<i64: 1>} : (tensor<4xf32>) -> tensor<?x4xf32, "s0">
  %1 = "ember.add"(%x, %0) : (tensor<?x4xf32, "s0">, tensor<?x4xf32, "s0">) -> tensor<?x4xf32, "s0">
  return %1 : tensor<?x4xf32, "s0">
}

// ember.dimension_size: a symbolic size as read off the argument, a static one a constant.
// CHECK-LABEL: func.func @dimension_size
// CHECK: %[[C:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[N:.*]] = tensor.dim %{{.*}}, %[[C]] : tensor<2x?xf32>
// CHECK-NEXT: %[[I:.*]] = arith.index_cast %[[N]] : index to i32
// CHECK-NEXT: tensor.from_elements %[[I]] : tensor<i32>
// CHECK: arith.constant 2 : i32
// CHECK-NOT: tensor.dim
// CHECK: return
func.func @dimension_size(%x: tensor<2x?xf32, "s0">) -> (tensor<i32>, tensor<i32>) {
  %0 = "ember.dimension_size"(%x) {dimension = 1 : i64} : (tensor<2x?xf32, "s0">) -> tensor<i32>
  %1 = "ember.dimension_size"(%x) {dimension = 0 : i64} : (tensor<2x?xf32, "s0">) -> tensor<i32>
  return %0, %1 : tensor<i32>, tensor<i32>
}

// A fused sum of f(a) * b, f unary, would be taken by IREE's data tiling for a contraction
// that drops f: the product gets a dispatch of its own behind a barrier. Must not fire for
// a plain sum of products (a genuine contraction IREE computes right).
// CHECK-LABEL: func.func @unary_times_input_summed
// CHECK: arith.negf
// CHECK-NEXT: arith.mulf
// CHECK: util.optimization_barrier
// CHECK: iterator_types = ["parallel", "reduction"]
// CHECK-LABEL: func.func @product_summed
// CHECK-NOT: util.optimization_barrier
// CHECK: return
func.func @unary_times_input_summed(%a: tensor<3x4xf32>, %b: tensor<4xf32>) -> tensor<3xf32> {
  %0 = "ember.fusion"(%a, %b) ({
  ^bb0(%x: tensor<3x4xf32>, %y: tensor<4xf32>):
    %1 = "ember.neg"(%x) : (tensor<3x4xf32>) -> tensor<3x4xf32>
    %2 = "ember.broadcast_in_dim"(%y) {broadcast_dimensions = array<i64: 1>} : (tensor<4xf32>) -> tensor<3x4xf32>
    %3 = "ember.mul"(%1, %2) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
    %4 = "ember.reduce_sum"(%3) {axes = array<i64: 1>} : (tensor<3x4xf32>) -> tensor<3xf32>
    "ember.yield"(%4) : (tensor<3xf32>) -> ()
  }) : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func @product_summed(%a: tensor<3x4xf32>, %b: tensor<4xf32>) -> tensor<3xf32> {
  %0 = "ember.fusion"(%a, %b) ({
  ^bb0(%x: tensor<3x4xf32>, %y: tensor<4xf32>):
    %2 = "ember.broadcast_in_dim"(%y) {broadcast_dimensions = array<i64: 1>} : (tensor<4xf32>) -> tensor<3x4xf32>
    %3 = "ember.mul"(%x, %2) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
    %4 = "ember.reduce_sum"(%3) {axes = array<i64: 1>} : (tensor<3x4xf32>) -> tensor<3xf32>
    "ember.yield"(%4) : (tensor<3xf32>) -> ()
  }) : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// A plain product summed to a scalar, one factor read along the inner dim only: IREE 3.13's
// CPU codegen fails on it as a contraction ("invalid accumulator/result vector shape"), so
// it takes the same barrier. (@product_summed above keeps a dim: no barrier.)
// CHECK-LABEL: func.func @product_summed_whole
// CHECK: arith.mulf
// CHECK: util.optimization_barrier
// CHECK: iterator_types = ["reduction", "reduction"]
func.func @product_summed_whole(%a: tensor<3x4xf32>, %b: tensor<4xf32>) -> tensor<f32> {
  %0 = "ember.fusion"(%a, %b) ({
  ^bb0(%x: tensor<3x4xf32>, %y: tensor<4xf32>):
    %2 = "ember.broadcast_in_dim"(%y) {broadcast_dimensions = array<i64: 1>} : (tensor<4xf32>) -> tensor<3x4xf32>
    %3 = "ember.mul"(%x, %2) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
    %4 = "ember.reduce_sum"(%3) {axes = array<i64: 0, 1>} : (tensor<3x4xf32>) -> tensor<f32>
    "ember.yield"(%4) : (tensor<f32>) -> ()
  }) : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// A square (x * x, one operand twice) is a unary op to that test: sum(square(a) * b) takes
// the barrier too (it crashed IREE's vector.contract lowering).
// CHECK-LABEL: func.func @square_summed_whole
// CHECK: arith.mulf
// CHECK: arith.mulf
// CHECK: util.optimization_barrier
// CHECK: iterator_types = ["reduction", "reduction"]
func.func @square_summed_whole(%a: tensor<3x4xf32>, %b: tensor<4xf32>) -> tensor<f32> {
  %0 = "ember.fusion"(%a, %b) ({
  ^bb0(%x: tensor<3x4xf32>, %y: tensor<4xf32>):
    %1 = "ember.mul"(%x, %x) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
    %2 = "ember.broadcast_in_dim"(%y) {broadcast_dimensions = array<i64: 1>} : (tensor<4xf32>) -> tensor<3x4xf32>
    %3 = "ember.mul"(%1, %2) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
    %4 = "ember.reduce_sum"(%3) {axes = array<i64: 0, 1>} : (tensor<3x4xf32>) -> tensor<f32>
    "ember.yield"(%4) : (tensor<f32>) -> ()
  }) : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// Must not fire: functions with no ember ops come out unchanged.
// CHECK-LABEL: func.func @upstream_only
// CHECK-NEXT: %[[R:.*]] = arith.addf
// CHECK-NEXT: return %[[R]]
func.func @upstream_only(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %x, %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// A reduction to a few elements over 2^18 or more splits its largest run of reduced axes
// into up to 1024 chunks of at least 1024 elements (a parallel dim: 64 here), then reduces
// the partials; it must not split where no chunk count from 16 to 1024 divides the run
// (here 262147 is prime).
// CHECK-LABEL: func.func @split_reductions
// CHECK: tensor.expand_shape {{.*}} output_shape [2, 3, 64, 1024]
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction", "reduction"]{{.*}}outs({{.*}}tensor<3x64xf32>)
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}}tensor<3x64xf32>{{.*}}outs({{.*}}tensor<3xf32>)
// CHECK: arith.maximumf
// CHECK-NOT: expand_shape
// CHECK: return
func.func @split_reductions(%x: tensor<2x3x65536xf32>, %y: tensor<262147xf32>) -> (tensor<3xf32>, tensor<f32>) {
  %0 = "ember.reduce_sum"(%x) {axes = array<i64: 0, 2>} : (tensor<2x3x65536xf32>) -> tensor<3xf32>
  %1 = "ember.reduce_max"(%y) {axes = array<i64: 0>} : (tensor<262147xf32>) -> tensor<f32>
  return %0, %1 : tensor<3xf32>, tensor<f32>
}

// Complex numbers lower to the complex dialect: arithmetic, a part, and a sum whose
// identity is a complex.constant.
// CHECK-LABEL: func.func @complex
// CHECK: complex.create
// CHECK: complex.mul
// CHECK: complex.abs
// CHECK: complex.constant [0.000000e+00 : f32, 0.000000e+00 : f32] : complex<f32>
// CHECK: complex.add
func.func @complex(%re: tensor<4xf32>, %im: tensor<4xf32>) -> (tensor<4xf32>, tensor<complex<f32>>) {
  %z = "ember.complex"(%re, %im) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xcomplex<f32>>
  %sq = "ember.mul"(%z, %z) : (tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  %m = "ember.abs"(%sq) : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
  %s = "ember.reduce_sum"(%z) {axes = array<i64: 0>} : (tensor<4xcomplex<f32>>) -> tensor<complex<f32>>
  return %m, %s : tensor<4xf32>, tensor<complex<f32>>
}

// ember.copy reads its operand (behind a barrier) where it writes, each element picked over
// a zero by a condition behind a barrier: contiguous loads at any rank, nothing to fold. No
// read at computed coordinates (tensor.extract), which IREE turned into a gather.
// CHECK-LABEL: func.func @copy
// CHECK: %[[S:.*]] = util.optimization_barrier %arg0 : tensor<2x3x4xf32>
// CHECK: %[[T:.*]] = arith.constant true
// CHECK: %[[K:.*]] = util.optimization_barrier %[[T]] : i1
// CHECK: linalg.generic {indexing_maps = [#map{{[0-9]*}}, #map{{[0-9]*}}], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[S]]
// CHECK: arith.select %[[K]], %{{.*}}, %{{.*}} : f32
// CHECK-NOT: tensor.extract
// CHECK: return
// CHECK-LABEL: func.func @copy_symbolic_complex
// CHECK: util.optimization_barrier %arg0 : tensor<2x?xcomplex<f32>>
// CHECK: complex.constant [0.000000e+00 : f32, 0.000000e+00 : f32]
// CHECK: arith.select %{{.*}} : complex<f32>
// CHECK-NOT: tensor.extract
// CHECK: return
func.func @copy(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = "ember.copy"(%x) : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}
func.func @copy_symbolic_complex(%x: tensor<2x?xcomplex<f32>, "s0">) -> tensor<2x?xcomplex<f32>, "s0"> {
  %0 = "ember.copy"(%x) : (tensor<2x?xcomplex<f32>, "s0">) -> tensor<2x?xcomplex<f32>, "s0">
  return %0 : tensor<2x?xcomplex<f32>, "s0">
}

// A copy of a splat constant is a fill of a fresh buffer with the element, read through a
// barrier of its own for each copy: no temporary holding the splat to copy from, and no two
// copies IREE could merge into one buffer (two loops starting from one constant). A constant
// that is not a splat is copied.
// CHECK-LABEL: func.func @copy_of_splat
// CHECK: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[A:.*]] = util.optimization_barrier %[[Z]] : f32
// CHECK: linalg.fill ins(%[[A]] : f32) outs(%{{.*}} : tensor<64x32xf32>)
// CHECK: %[[B:.*]] = util.optimization_barrier %{{.*}} : f32
// CHECK: linalg.fill ins(%[[B]] : f32) outs(%{{.*}} : tensor<64x32xf32>)
// CHECK: util.optimization_barrier %{{.*}} : tensor<2xf32>
// CHECK: linalg.generic
// CHECK: return
func.func @copy_of_splat() -> (tensor<64x32xf32>, tensor<64x32xf32>, tensor<2xf32>) {
  %z = "ember.constant"() {value = dense<0.0> : tensor<64x32xf32>} : () -> tensor<64x32xf32>
  %c = "ember.constant"() {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %0 = "ember.copy"(%z) : (tensor<64x32xf32>) -> tensor<64x32xf32>
  %1 = "ember.copy"(%z) : (tensor<64x32xf32>) -> tensor<64x32xf32>
  %2 = "ember.copy"(%c) : (tensor<2xf32>) -> tensor<2xf32>
  return %0, %1, %2 : tensor<64x32xf32>, tensor<64x32xf32>, tensor<2xf32>
}
