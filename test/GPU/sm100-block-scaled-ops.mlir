// The instruction forms the real-NVFP4 sm100 plan (SM100BlockScaledPlan.h)
// commits to, as MLIR 22's NVVM ops emit them, assemble for sm_100a: the
// scale atoms' tcgen05.cp.cta_group::1.32x128b.warpx4 and the
// tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16 with the plan's
// instruction descriptor (M = 128, N = 256: 0x08400480) and shared-memory
// descriptors. This checks the forms alone (the kernel that issues them:
// sm100-block-scaled-emit.test), and nothing here runs. The block16 MMA
// needs PTX ISA 8.8: LLVM 22's NVPTX backend cannot select it with +ptx86
// or +ptx87, so the pipeline gives sm_100a +ptx88 (ptxas 13.0 takes it).
//
// REQUIRES: ptxas
// RUN: conv3d-opt %s --gpu-module-to-binary="format=isa" | FileCheck %s
// RUN: conv3d-opt %s --gpu-module-to-binary="format=bin toolkit=%cuda_home" -o /dev/null

// CHECK: tcgen05.cp.cta_group::1.32x128b.warpx4
// CHECK: tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16
module attributes {gpu.container_module} {
  gpu.module @block_scaled [#nvvm.target<chip = "sm_100a", features = "+ptx88">] {
    llvm.func @mma(%acc: i32, %scaleA: i32, %scaleB: i32, %atom: i64,
                   %descA: i64, %descB: i64, %accumulate: i1)
        attributes {nvvm.kernel} {
      %idesc = llvm.mlir.constant(138413184 : i32) : i32
      %d = llvm.inttoptr %acc : i32 to !llvm.ptr<6>
      %sa = llvm.inttoptr %scaleA : i32 to !llvm.ptr<6>
      %sb = llvm.inttoptr %scaleB : i32 to !llvm.ptr<6>
      nvvm.tcgen05.cp %sa, %atom {shape = #nvvm.tcgen05_cp_shape<shape_32x128b>, multicast = #nvvm.tcgen05_cp_multicast<warpx4>}
      nvvm.tcgen05.cp %sb, %atom {shape = #nvvm.tcgen05_cp_shape<shape_32x128b>, multicast = #nvvm.tcgen05_cp_multicast<warpx4>}
      nvvm.tcgen05.mma.block_scale %d, %descA, %descB, %idesc, %accumulate, %sa, %sb {kind = #nvvm.block_scale_kind<mxf4nvf4>, ctaGroup = #nvvm.cta_group<cta_1>, blockScale = #nvvm.tcgen05_mma_block_scale<block16>} : (!llvm.ptr<6>, i64, i64, i32, i1, !llvm.ptr<6>, !llvm.ptr<6>)
      llvm.return
    }
  }
}
