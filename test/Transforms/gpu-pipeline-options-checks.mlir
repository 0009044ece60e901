// conv3d-gpu-pipeline's own checks, beyond valid options (issue 26,
// item 12): a GPU target (cpu, the options' default, is not one), and the
// CUDA toolkit it runs (upstream's gpu-module-to-binary reports a missing
// one as an error but succeeds, and conv3d-opt exited 0).
//
// RUN: not conv3d-opt %s --conv3d-gpu-pipeline=target=cpu 2>&1 | FileCheck %s --check-prefix=CPU
// RUN: not conv3d-opt %s --conv3d-gpu-pipeline 2>&1 | FileCheck %s --check-prefix=CPU
// CPU: error: target=cpu is not a GPU target: conv3d-gpu-pipeline compiles for target=sm80, sm90 or sm100 (conv3d-cpu-pipeline compiles for the CPU)
//
// RUN: not conv3d-opt %s '--conv3d-gpu-pipeline=target=sm80 cuda-home=/nonexistent' 2>&1 | FileCheck %s --check-prefix=HOME
// HOME: error: CUDA toolkit not found at '/nonexistent' (no /nonexistent/nvvm/libdevice/libdevice.10.bc): set CUDA_HOME or the toolkit option (cuda-home=, conv3d-run --cuda-home, cuda_home in the C API)
//
// A toolkit with libdevice but no ptxas: PTX (isa) needs only libdevice,
// cubins (bin) need ptxas too.
// RUN: rm -rf %t && mkdir -p %t/nvvm/libdevice && touch %t/nvvm/libdevice/libdevice.10.bc
// RUN: not conv3d-opt %s '--conv3d-gpu-pipeline=target=sm90 cuda-home=%t' 2>&1 | FileCheck %s --check-prefix=PTXAS
// PTXAS: error: CUDA toolkit not found at '{{.*}}' (no {{.*}}/bin/ptxas)

func.func @f() {
  return
}
