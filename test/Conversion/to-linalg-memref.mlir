// conv3d-to-linalg on ops in memref form (a module written after
// bufferization): each becomes the same op on tensors read from its buffers
// (one `to_tensor restrict` per distinct buffer), lowered as on tensors, its
// result materialized into the output buffer. An output the op overwrites
// and does not read is not read: the op gets a tensor.empty and the
// materialization is `restrict`, so empty-tensor elimination computes the
// result in the buffer. An output that is read (accumulation, a residual in
// place) is read once and written by a plain materialization. This used to
// be refused ("lowers the tensor form only"), so lowering=reference failed
// every entry of a module with a memref-form convolution.
//
// RUN: conv3d-opt %s -conv3d-to-linalg -split-input-file | FileCheck %s
// RUN: conv3d-opt %s -conv3d-to-linalg -split-input-file | FileCheck %s --check-prefix=LEFT
// RUN: conv3d-opt %s -conv3d-cpu-pipeline=lowering=reference -split-input-file | FileCheck %s --check-prefix=LLVM
// RUN: conv3d-opt %s -conv3d-cpu-pipeline=lowering=reference -split-input-file | FileCheck %s --check-prefix=LLVMFN

// LEFT-NOT: {{conv3d\.(conv|epilogue|quantize)}}
// LLVM-NOT: {{conv3d\.(conv|epilogue|quantize)}}
// LLVM-NOT: bufferization.

// CHECK-LABEL: func.func @conv
// CHECK-SAME: (%[[X:.*]]: memref<1x4x6x6x8xf32>, %[[W:.*]]: memref<3x3x3x8x16xf32>, %[[O:.*]]: memref<1x2x4x4x16xf32>)
// CHECK: %[[XT:.*]] = bufferization.to_tensor %[[X]] restrict : memref<1x4x6x6x8xf32> to tensor<1x4x6x6x8xf32>
// CHECK: %[[WT:.*]] = bufferization.to_tensor %[[W]] restrict
// CHECK-NOT: bufferization.to_tensor %[[O]]
// CHECK: %[[DEST:.*]] = tensor.empty() : tensor<1x2x4x4x16xf32>
// CHECK: %[[ACC:.*]] = linalg.generic {{.*}} ins(%[[XT]], %[[WT]] : {{.*}})
// CHECK: %[[OUT:.*]] = linalg.generic {{.*}} ins(%[[ACC]] : tensor<1x2x4x4x16xf32>) outs(%[[DEST]] : tensor<1x2x4x4x16xf32>)
// CHECK: bufferization.materialize_in_destination %[[OUT]] in restrict writable %[[O]]
// LLVMFN-LABEL: llvm.func @conv
func.func @conv(%x: memref<1x4x6x6x8xf32>, %w: memref<3x3x3x8x16xf32>, %o: memref<1x2x4x4x16xf32>) {
  conv3d.conv ins(%x, %w : memref<1x4x6x6x8xf32>, memref<3x3x3x8x16xf32>) outs(%o : memref<1x2x4x4x16xf32>) overwrite
  return
}

// -----

// CHECK-LABEL: func.func @accumulate
// CHECK-SAME: %[[O:[^:]*]]: memref<1x2x4x4x16xf32>)
// CHECK: %[[INIT:.*]] = bufferization.to_tensor %[[O]] restrict
// CHECK: %[[ACC:.*]] = linalg.generic {{.*}} outs(%[[INIT]] : tensor<1x2x4x4x16xf32>)
// CHECK: %[[OUT:.*]] = linalg.generic {{.*}} ins(%[[ACC]] : {{.*}}) outs(%[[INIT]] :
// CHECK: bufferization.materialize_in_destination %[[OUT]] in writable %[[O]]
// LLVMFN-LABEL: llvm.func @accumulate
func.func @accumulate(%x: memref<1x4x6x6x8xf32>, %w: memref<3x3x3x8x16xf32>, %o: memref<1x2x4x4x16xf32>) {
  conv3d.conv ins(%x, %w : memref<1x4x6x6x8xf32>, memref<3x3x3x8x16xf32>) outs(%o : memref<1x2x4x4x16xf32>)
  return
}

// -----

// The output is also the residual: one to_tensor serves both.
// CHECK-LABEL: func.func @residual_in_place
// CHECK-SAME: (%[[S:.*]]: memref<1x2x2x2x4xf32>, %[[O:.*]]: memref<1x2x2x2x4xf32>)
// CHECK: %[[ST:.*]] = bufferization.to_tensor %[[S]] restrict
// CHECK-NEXT: %[[OT:.*]] = bufferization.to_tensor %[[O]] restrict
// CHECK-NOT: bufferization.to_tensor
// CHECK: %[[OUT:.*]] = linalg.generic {{.*}} ins(%[[ST]], %[[OT]] : {{.*}}) outs(%[[OT]] :
// CHECK: bufferization.materialize_in_destination %[[OUT]] in writable %[[O]]
// LLVMFN-LABEL: llvm.func @residual_in_place
func.func @residual_in_place(%s: memref<1x2x2x2x4xf32>, %o: memref<1x2x2x2x4xf32>) {
  conv3d.epilogue ins(%s : memref<1x2x2x2x4xf32>) residual(%o : memref<1x2x2x2x4xf32>) outs(%o : memref<1x2x2x2x4xf32>) overwrite
  return
}

// -----

// CHECK-LABEL: func.func @quantize
// CHECK: bufferization.to_tensor
// CHECK-NOT: bufferization.to_tensor
// CHECK: bufferization.materialize_in_destination %{{.*}} in restrict writable
// LLVMFN-LABEL: llvm.func @quantize
func.func @quantize(%x: memref<1x2x2x2x16xbf16>, %amax: f32, %e: memref<1x2x2x2x16xbf16>) {
  conv3d.quantize #conv3d.nvfp4<block_size = 16> axes = [4] ins(%x : memref<1x2x2x2x16xbf16>) amax(%amax) outs(%e : memref<1x2x2x2x16xbf16>)
  return
}
