//===- PtxAssembler.h - assemble emitted PTX with ptxas ---------*- C++ -*-===//
//
// conv3d-sweep --assemble: the PTX of a compiled convolution (Engine::emit
// with EmitStage::Ptx, one module per kernel after a marker line) assembled
// by the CUDA toolkit's ptxas, module by module, as
// test/Inputs/ptxas_each.py does for the lit tests: what checks a target's
// code without a GPU, and the only check of sm100 code, which no GPU here
// runs. Each kernel is also classified by the MMA it issues, so that a
// sweep can say which kernels its cases reached.
//
//===----------------------------------------------------------------------===//

#ifndef CONV3D_TOOLS_CONV3D_SWEEP_PTXASSEMBLER_H
#define CONV3D_TOOLS_CONV3D_SWEEP_PTXASSEMBLER_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace conv3d_sweep {

/// What a kernel's PTX multiplies with.
enum class KernelKind {
  Tcgen05Cta1, ///< tcgen05.mma cta_group::1 kind::f16 (sm100)
  Tcgen05Cta2, ///< tcgen05.mma cta_group::2 kind::f16 (sm100, 2-CTA pair)
  BlockScaled, ///< tcgen05.mma block_scale kind::mxf4nvf4 (real NVFP4)
  Wgmma,       ///< wgmma.mma_async (sm90)
  MmaSync,     ///< mma.sync (the sm80 kernel)
  NoMma,       ///< a prepass or layout kernel
};
llvm::StringRef stringifyKernelKind(KernelKind kind);

struct AssembledKernel {
  std::string name;
  KernelKind kind = KernelKind::NoMma;
  /// Bytes of the cubin ptxas wrote.
  uint64_t cubinBytes = 0;
};

/// Assembles each PTX module of `emitted` with `ptxas -arch=<chip>`. An
/// error names the kernel and ptxas's message: a failing ptxas, or a
/// warning or a "Potential Performance Loss" note (wgmmas serialized) among
/// its diagnostics, on which ptxas exits 0; so is text without any module.
llvm::Expected<std::vector<AssembledKernel>>
assemblePtxModules(llvm::StringRef emitted, llvm::StringRef ptxas,
                   llvm::StringRef chip);

} // namespace conv3d_sweep

#endif // CONV3D_TOOLS_CONV3D_SWEEP_PTXASSEMBLER_H
