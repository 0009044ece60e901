#!/usr/bin/env bash
# Runs on the GPU machine (see scripts/gpu/stage.sh). Usage:
#   scripts/gpu/run.sh info|unit|lit|sweep N|sanitize|smoke|large|bench|networks|torch|tmafp4|overhead|emulator|all
# TARGET=sm90 makes `sweep` and `sanitize` exercise the sm90 kernel (H100);
# `large` runs tensors over 2^31 elements through TARGETS (default: sm80
# sm90); `sweep` logs its seed (SEED, default 1) and target; `torch` checks
# the PyTorch path (conv3d.conv3d, conv3d.torch); `networks [flags]` runs
# bench/networks.py (real networks, --random N, --candidates) against cuDNN.
# Logs go to $OUT (when set) so they come back from the device tool.
source "$(dirname "${BASH_SOURCE[0]}")/job-setup.sh"
step() { echo; echo "=== $* ==="; }
run_info() { step info; conv3d-gpu-info; nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv; }
run_unit() {
  step unit tests
  "$carry/unittests/Conv3dUnitTests" --gtest_brief=1 2>&1 | tee "$out/unit.log" | tail -25 || status=1
}
run_lit() {
  step lit GPU tests
  # A site config pointing at the carried tools.
  mkdir -p /tmp/conv3d-lit
  cat > /tmp/conv3d-lit/lit.site.cfg.py <<CFG
import os
config.conv3d_src_root = r"$PWD"
config.conv3d_obj_root = "/tmp/conv3d-lit"
config.conv3d_tools_dir = r"$carry/bin"
config.llvm_tools_dir = r"$carry/tools"
config.cuda_home = r"$CUDA_HOME"
config.python_executable = "python3"
lit_config.load_config(config, r"$PWD/test/lit.cfg.py")
CFG
  python3 -c "from lit.main import main; main()" -sv --filter "${LIT_FILTER:-GPU/}" /tmp/conv3d-lit \
    2>&1 | tee "$out/lit.log" | tail -40 || status=1
}
run_sweep() {
  step "${TARGET:-sm80} sweep ($1 cases)"
  echo "sweep: target=${TARGET:-sm80} count=$1 seed=${SEED:-1} $(date -u +%FT%TZ)" | tee -a "$out/sweep-seeds.log"
  conv3d-sweep --target="${TARGET:-sm80}" --count="$1" --dtypes=bf16,f16 --seed="${SEED:-1}" \
    --variants=epilogue,accumulate,fqrsc,quant,qslice,config \
    2>&1 | tee "$out/sweep.log" | tail -30 || status=1
}
run_sanitize() {
  step compute-sanitizer
  local cs=/usr/local/cuda/bin/compute-sanitizer
  if [[ "${TARGET:-sm80}" == sm90 ]]; then
    for tool in memcheck racecheck synccheck; do
      for args in "--input-shape=1,6,12,12,64 --filter-shape=3,3,3,64,96 --padding=2,0,1,1,1,1" \
                  "--input-shape=2,5,9,9,128 --filter-shape=3,3,3,128,256 --padding=1,1,1,1,1,1 --stride=2,1,2 --bias --activation=silu --residual" \
                  "--input-shape=1,6,8,8,96 --filter-shape=3,3,3,96,40 --quantize-input=nvfp4 --quant-placement=prepass" \
                  "--input-shape=1,6,9,9,64 --filter-shape=3,3,3,64,64 --padding=2,0,1,1,1,1 --qslice=fused" \
                  "--input-shape=1,4,9,9,64 --filter-shape=3,3,3,64,128 --padding=1,1,1,1,1,1 --config=tile_m=256,tile_n=128,tile_k=64,stages=3,warps_m=8,warps_n=1" \
                  "--input-shape=1,4,9,9,64 --filter-shape=3,3,3,64,64 --padding=1,1,1,1,1,1 --config=tile_m=64,tile_n=64,tile_k=64,stages=2,warps_m=4,warps_n=1,split_k=3 --accumulate" \
                  "--input-shape=2,5,9,9,128 --filter-shape=3,3,3,128,192 --padding=1,1,1,1,1,1 --bias --config=tile_m=128,tile_n=128,tile_k=64,stages=4,warps_m=4,warps_n=1,schedule=pingpong" \
                  "--input-shape=1,6,9,9,64 --filter-shape=3,3,3,64,96 --padding=2,0,1,1,1,1 --quantize-input=nvfp4 --quant-placement=tile --block-size=16" \
                  "--input-shape=1,6,12,12,128 --filter-shape=3,3,3,128,64 --padding=1,1,1,1,1,1 --quantize-input=nvfp4 --quant-placement=tile --block-size=32 --config=tile_m=64,tile_n=64,tile_k=64,stages=2,warps_m=4,warps_n=1,schedule=pingpong" \
                  "--input-shape=1,5,18,80,96 --filter-shape=3,3,3,96,96 --padding=2,0,1,1,1,1 --bias --activation=silu --config=tile_m=256,tile_n=96,tile_k=64,stages=8,warps_m=8,warps_n=1,mainloop=halo" \
                  "--input-shape=2,4,20,70,128 --filter-shape=3,3,3,128,64 --dilation=1,2,2 --padding=1,1,2,2,2,2 --config=tile_m=128,tile_n=64,tile_k=64,stages=3,warps_m=8,warps_n=1,mainloop=halo" \
                  "--input-shape=2,6,10,10,64 --filter-shape=3,3,3,64,96 --padding=20,0,18,1,1,1 --bias" \
                  "--input-shape=1,6,10,10,64 --filter-shape=3,3,3,64,128 --padding=1,1,20,1,1,1 --config=tile_m=64,tile_n=128,tile_k=64,stages=4,warps_m=4,warps_n=1,schedule=pingpong" \
                  "--input-shape=1,5,9,9,64 --filter-shape=3,3,3,64,96 --padding=2,0,1,1,1,1 --config=tile_m=128,tile_n=96,tile_k=64,stages=4,warps_m=8,warps_n=1,cluster_m=2" \
                  "--input-shape=2,4,8,8,64 --filter-shape=3,3,3,64,96 --padding=20,0,1,1,1,1 --bias --config=tile_m=64,tile_n=96,tile_k=64,stages=4,warps_m=4,warps_n=1,cluster_m=2"; do
        $cs --tool "$tool" --error-exitcode 3 conv3d-run --quiet --target=sm90 --filter-layout=fqrsc $args \
          >> "$out/sanitize.log" 2>&1 || { echo "$tool FAILED: $args"; status=1; }
        tail -1 "$out/sanitize.log"
      done
    done
    return
  fi
  for tool in memcheck racecheck; do
    for args in "--input-shape=1,6,12,12,64 --filter-shape=3,3,3,64,96 --padding=2,0,1,1,1,1" \
                "--input-shape=2,5,9,9,3 --filter-shape=3,3,3,3,5 --padding=1,1,1,1,1,1 --stride=2,1,2" \
                "--input-shape=1,6,8,8,32 --filter-shape=3,3,3,32,48 --quantize-input=nvfp4 --bias --activation=silu --residual" \
                "--input-shape=1,6,9,9,24 --filter-shape=3,3,3,24,40 --padding=1,1,1,1,1,1 --quantize-input=nvfp4 --quant-placement=tile"; do
      $cs --tool "$tool" --error-exitcode 3 conv3d-run --quiet --target=sm80 $args \
        >> "$out/sanitize.log" 2>&1 || { echo "$tool FAILED: $args"; status=1; }
      tail -1 "$out/sanitize.log"
    done
  done
}
run_smoke() {
  step "${TARGET:-sm90} smoke tests"
  # Each case: compile, run on random data with a poisoned output, check
  # against the float64 reference; a hang is a failure (timeout).
  local cases=(
    "--input-shape=1,6,16,16,64 --filter-shape=3,3,3,64,128 --padding=2,0,1,1,1,1"
    "--input-shape=1,4,8,8,64 --filter-shape=1,1,1,64,64"
    "--input-shape=2,5,9,9,128 --filter-shape=3,3,3,128,256 --padding=1,1,1,1,1,1 --stride=2,1,2 --bias --activation=silu --residual"
    "--input-shape=1,6,12,12,96 --filter-shape=3,3,3,96,96 --padding=2,0,1,1,1,1"
    "--input-shape=1,6,9,9,64 --filter-shape=3,3,3,64,64 --padding=2,0,1,1,1,1 --qslice=fused"
    "--input-shape=1,4,9,9,64 --filter-shape=3,3,3,64,64 --padding=1,1,1,1,1,1 --config=tile_m=64,tile_n=64,tile_k=64,stages=2,warps_m=4,warps_n=1,split_k=3"
    "--input-shape=1,4,9,9,64 --filter-shape=3,3,3,64,128 --padding=1,1,1,1,1,1 --config=tile_m=256,tile_n=128,tile_k=64,stages=3,warps_m=8,warps_n=1"
    "--input-shape=1,5,10,10,72 --filter-shape=3,3,3,72,40 --dilation=2,1,2 --padding=2,2,1,1,2,2 --dtype=f16 --accumulate"
    "--input-shape=1,6,8,8,16 --filter-shape=3,3,3,16,32"
    "--input-shape=2,5,9,9,128 --filter-shape=3,3,3,128,192 --padding=1,1,1,1,1,1 --bias --activation=relu --config=tile_m=128,tile_n=128,tile_k=64,stages=4,warps_m=4,warps_n=1,schedule=pingpong"
    "--input-shape=1,7,9,9,64 --filter-shape=3,3,3,64,96 --padding=2,0,1,1,1,1 --qslice=fused --config=tile_m=64,tile_n=96,tile_k=64,stages=3,warps_m=4,warps_n=1,schedule=pingpong,k_order=qslice_outer"
    "--input-shape=1,6,16,16,64 --filter-shape=3,3,3,64,128 --padding=2,0,1,1,1,1 --quantize-input=nvfp4 --quant-placement=tile --block-size=16"
    "--input-shape=1,5,9,9,64 --filter-shape=3,3,3,64,96 --padding=2,0,1,1,1,1 --config=tile_m=128,tile_n=96,tile_k=64,stages=4,warps_m=8,warps_n=1,cluster_m=2"
    "--input-shape=2,6,12,12,64 --filter-shape=3,3,3,64,96 --padding=20,0,20,20,1,1 --bias"
    "--input-shape=2,4,8,8,64 --filter-shape=3,3,3,64,96 --padding=20,0,1,1,1,1 --config=tile_m=64,tile_n=96,tile_k=64,stages=4,warps_m=4,warps_n=1,cluster_m=2"
  )
  for args in "${cases[@]}"; do
    [[ "$args" == *--dtype* ]] || args="$args --dtype=bf16"
    timeout 60 conv3d-run --target="${TARGET:-sm90}" --filter-layout=fqrsc \
      $args 2>&1 | tail -2 | tee -a "$out/smoke.log" || status=1
  done
}
run_torch() {
  step "PyTorch path (python/conv3d, conv3d.torch)"
  # The torch-native hit path, built against this machine's PyTorch first
  # (CONV3D_TORCH_NATIVE=0 checks the others alone).
  if [[ "${CONV3D_TORCH_NATIVE:-1}" != 0 ]]; then
    export CONV3D_TORCH_NATIVE_DIR="${CONV3D_TORCH_NATIVE_DIR:-/tmp/conv3d-torch-native}"
    python3 -m conv3d --build-torch-native 2>&1 | tail -3 || status=1
  fi
  python3 scripts/gpu/torch_check.py 2>&1 | tee "$out/torch.log" || status=1
}
run_large() {
  # Tensors over 2^31 elements (flat offsets past int32): 720p video-VAE
  # stages, 21 frames x 720 x 1280 x 128 channels (2.48e9 elements, 4.9 GB
  # in bf16). The whole float64 reference would take hours, so 2000 output
  # rows are checked (first, last, those around flat offsets 2^31 and 2^32,
  # random ones); data random, output poisoned first.
  local cases=(
    # Causal 3x3x3 at full resolution: input and output both past 2^31.
    "--input-shape=1,21,720,1280,128 --filter-shape=3,3,3,128,128 --padding=2,0,1,1,1,1 --bias --activation=silu"
    # Spatial downsampling: the input past 2^31, the output (1.24e9) not.
    "--input-shape=1,21,720,1280,128 --filter-shape=3,3,3,128,256 --padding=2,0,1,1,1,1 --stride=1,2,2"
  )
  for target in ${TARGETS:-sm80 sm90}; do
    for args in "${cases[@]}"; do
      step "large tensor, $target: $args"
      timeout 900 conv3d-run --no-cache --target="$target" --filter-layout=fqrsc --dtype=bf16 \
        --check-rows=2000 --seed="${SEED:-1}" $args 2>&1 | tee -a "$out/large.log" | tail -4
      [[ ${PIPESTATUS[0]} -eq 0 ]] || { echo "large FAILED ($target): $args"; status=1; }
    done
  done
}
run_tma_fp4() {
  # The TMA im2col boxes of the real-NVFP4 sm100 plan (packed FP4 codes,
  # 128-byte swizzle; 16 scale bytes a pixel), checked on this GPU.
  step "TMA im2col over packed FP4 codes and scales"
  nvcc -arch=sm_90a -O2 -o /tmp/tma_fp4 scripts/gpu/tma_fp4_im2col.cu -lcuda &&
    /tmp/tma_fp4 2>&1 | tee "$out/tma-fp4.log" | tail -6
  [[ ${PIPESTATUS[0]} -eq 0 ]] || status=1
}
run_overhead() {
  # Host time per call of a cached convolution: the C++ run and the
  # runtime's pieces (conv3d-host-overhead), then the Python hit path next
  # to cuDNN's F.conv3d, with its breakdown (scripts/gpu/hit_path.py).
  step "host overhead per call"
  for target in sm90 sm80; do
    conv3d-host-overhead --target="$target" 2>&1 | tee -a "$out/overhead.log" || status=1
  done
  step "Python hit path (conv3d.conv3d on a seen signature) and cuDNN"
  python3 scripts/gpu/hit_path.py 2>&1 | tee -a "$out/overhead.log"
  [[ ${PIPESTATUS[0]} -eq 0 ]] || status=1
}
run_emulator() { step "PTX emulator vs. the H100"; bash scripts/gpu/emulator_check.sh || status=1; }
run_bench() { step benchmark; python3 bench/run_bench.py --out "$out" "$@" || status=1; }
run_networks() {
  step "networks against cuDNN: bench/networks.py $*"
  python3 bench/networks.py --out "$out" "$@" 2>&1 | tee "$out/networks.log"
  [[ ${PIPESTATUS[0]} -eq 0 ]] || status=1
}

case "${1:-all}" in
  info) run_info ;;
  unit) run_unit ;;
  lit) run_lit ;;
  sweep) run_sweep "${2:-120}" ;;
  sanitize) run_sanitize ;;
  smoke) run_smoke ;;
  large) run_large ;;
  bench) shift; run_bench "$@" ;;
  networks) shift; run_networks "$@" ;;
  torch) run_torch ;;
  tmafp4) run_tma_fp4 ;;
  overhead) run_overhead ;;
  emulator) run_emulator ;;
  all) run_info; run_unit; run_lit; run_sweep "${2:-120}"; run_sanitize ;;
  *) echo "usage: $0 info|unit|lit|sweep N|sanitize|smoke|large|bench|networks|torch|tmafp4|overhead|emulator|all"; exit 2 ;;
esac
exit $status
