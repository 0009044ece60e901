// Functions conv3d-run --module refuses before running
// (test/Execution/conv3d-run-hostile.test), and one it runs.

// Calls itself: the JIT'ed code would run until the stack overflows.
func.func @self(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = func.call @self(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// Recursion through another function.
func.func @ping(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = func.call @pong(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
func.func @pong(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = func.call @ping(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// A call through a function value, which may recurse.
func.func @indirect(%x: tensor<4xf32>) -> tensor<4xf32> {
  %f = func.constant @scale : (tensor<4xf32>, f32) -> tensor<4xf32>
  %two = arith.constant 2.0 : f32
  %r = func.call_indirect %f(%x, %two) : (tensor<4xf32>, f32) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// x * s, called twice (a call graph with shared callees is no cycle), and
// shifted by an integer n.
func.func @twice(%x: tensor<4xf32>, %s: f32, %n: index) -> tensor<4xf32> {
  %a = func.call @scale(%x, %s) : (tensor<4xf32>, f32) -> tensor<4xf32>
  %b = func.call @scale(%a, %s) : (tensor<4xf32>, f32) -> tensor<4xf32>
  %i = arith.index_cast %n : index to i64
  %f = arith.sitofp %i : i64 to f32
  %r = func.call @scale(%b, %f) : (tensor<4xf32>, f32) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

func.func @scale(%x: tensor<4xf32>, %s: f32) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %s : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}
