// The registered GPU pipeline end to end: conv3d-gpu-pipeline with
// target=sm80 and gpu-binary-format=isa takes a tensor-level conv3d.conv
// (bias and SiLU fused into its epilogue) to one kernel, embedded as PTX in
// a gpu.binary, and a host function entirely in the LLVM dialect that
// allocates the result and launches the kernel on an mgpu stream. The
// config on the op pins the launch: 4 M tiles of 64 rows (M = 4*8*8), 2 x 2
// warps = 128 threads, 3 stages of 64x32 and 32x32 bf16 tiles = 18432 B of
// dynamic shared memory.
//
// format=isa stops at PTX, so ptxas does not run, but gpu-module-to-binary
// links libdevice from the CUDA toolkit (the exp of the SiLU): without a
// toolkit the PTX would call an undefined __nv_expf. Hence the ptxas
// feature, which stands for a toolkit being there.
// REQUIRES: ptxas
//
// RUN: conv3d-opt %s --conv3d-gpu-pipeline='target=sm80 gpu-binary-format=isa' > %t
// RUN: FileCheck %s < %t
// RUN: FileCheck %s --check-prefix=HOST < %t
// RUN: FileCheck %s --check-prefix=PTX < %t

// CHECK: module attributes {conv3d.host_allocation_bytes = {{[0-9]+}} : i64, gpu.container_module} {
// CHECK-NOT: func.func
// CHECK-LABEL: llvm.func @conv(
// CHECK-DAG: %[[SMEM:.*]] = llvm.mlir.constant(18432 : i32) : i32
// CHECK-DAG: %[[THREADS:.*]] = llvm.mlir.constant(128 : index) : i64
// CHECK-DAG: %[[BLOCKS:.*]] = llvm.mlir.constant(4 : index) : i64
// CHECK-DAG: %[[ONE:.*]] = llvm.mlir.constant(1 : index) : i64
// CHECK: llvm.call @mgpuMemAlloc(
// CHECK: %[[STREAM:.*]] = llvm.call @mgpuStreamCreate() : () -> !llvm.ptr
// CHECK-NEXT: gpu.launch_func <%[[STREAM]] : !llvm.ptr> @[[MODULE:[a-z_0-9]+]]::@[[KERNEL:[a-z_0-9]+]] blocks in (%[[BLOCKS]], %[[ONE]], %[[ONE]]) threads in (%[[THREADS]], %[[ONE]], %[[ONE]]) : i64 dynamic_shared_memory_size %[[SMEM]] args(
// CHECK-NEXT: llvm.call @mgpuStreamSynchronize(%[[STREAM]]) : (!llvm.ptr) -> ()
// CHECK-NEXT: llvm.call @mgpuStreamDestroy(%[[STREAM]]) : (!llvm.ptr) -> ()
// CHECK-NEXT: llvm.return
// CHECK-NEXT: }
// CHECK-NOT: gpu.module
// CHECK: gpu.binary @[[MODULE]]  [#gpu.object<#nvvm.target<O = 3, chip = "sm_80", features = "+ptx80">, {{.*}}assembly = "
// CHECK-NOT: __nv_
// CHECK-SAME: ">]

// Host code: only LLVM dialect operations and the launch, no buffers,
// loops or arithmetic of other dialects, no gpu.launch left.
// HOST-LABEL: llvm.func @conv(
// HOST-NOT: {{^ *(%[^ ]+ = )?(arith|cf|conv3d|func|gpu\.(launch |alloc|wait|memcpy)|linalg|math|memref|nvgpu|nvvm|scf|tensor|vector)[ .]}}
// HOST: gpu.launch_func
// HOST-NOT: {{^ *(%[^ ]+ = )?(arith|cf|conv3d|func|gpu\.(launch |alloc|wait|memcpy)|linalg|math|memref|nvgpu|nvvm|scf|tensor|vector)[ .]}}
// HOST: llvm.return

// The PTX (one escaped string): an sm_80 kernel of 128 threads with the
// cp.async pipeline, ldmatrix (also .trans for the [k][n] filter tile),
// bf16 mma.sync.m16n8k16, the SiLU's exp and 16-byte output stores.
// PTX: gpu.binary
// PTX-SAME: .target sm_80
// PTX-SAME: .visible .entry [[KERNEL:[a-z_0-9]+]](
// PTX-SAME: .maxntid 128, 1, 1
// PTX-SAME: cp.async.cg.shared.global
// PTX-SAME: cp.async.commit_group
// PTX-SAME: cp.async.wait_group
// PTX-SAME: bar.sync
// PTX-SAME: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX-SAME: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// PTX-SAME: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTX-SAME: ex2.approx
// PTX-SAME: st.global.v4
func.func @conv(%x: tensor<1x4x8x8x16xbf16>, %w: tensor<3x3x3x16x32xbf16>, %b: tensor<32xf32>) -> tensor<1x4x8x8x32xbf16> {
  %init = tensor.empty() : tensor<1x4x8x8x32xbf16>
  %0 = conv3d.conv ins(%x, %w : tensor<1x4x8x8x16xbf16>, tensor<3x3x3x16x32xbf16>) bias(%b : tensor<32xf32>) outs(%init : tensor<1x4x8x8x32xbf16>) overwrite padding = [1, 1, 1, 1, 1, 1] activation = silu config = #conv3d.igemm_config<tile_m = 64, tile_n = 32, tile_k = 32, stages = 3, warps_m = 2, warps_n = 2> -> tensor<1x4x8x8x32xbf16>
  return %0 : tensor<1x4x8x8x32xbf16>
}
