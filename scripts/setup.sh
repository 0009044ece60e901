#!/usr/bin/env bash
# Installs what conv3d-mlir needs (Debian packages), configures and builds it
# into build/, then runs the main job on a default example: a small causal
# 3x3x3 bf16 convolution compiled through the implicit-GEMM pipeline and run
# on the CPU target, checked against the independent reference. The tools
# the example needs are built first, the rest (unit tests, examples of the
# test suite) after it, so that the example's result comes early.
#
# Only the packages the build and the test suite need, without Debian's
# recommends (build-essential, clang-tools...); scripts/sanitize.sh installs
# the sanitizer runtimes itself. Each phase prints its time.
#
# Idempotent: packages already present are not reinstalled, an existing
# build/ is reused. Environment:
#   CONV3D_BUILD_DIR   build directory (default: build)
#   CONV3D_JOBS        parallel build jobs (default: number of cores)
#   CONV3D_SKIP_APT=1  do not call apt-get (packages installed already)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${CONV3D_BUILD_DIR:-$root/build}"
jobs="${CONV3D_JOBS:-$(nproc)}"
llvm=/usr/lib/llvm-22

# python3-dev: the C hit path of the Python package; python3-pip: its
# `pip install` (test/Python/pip-install.test; the package's build backend
# is its own, so nothing else).
packages=(libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools clang-22 lld-22
          ninja-build cmake libgtest-dev
          python3 python3-dev python3-numpy python3-pip)

log() { printf '[setup] %s\n' "$*"; }
phase_start=$(date +%s)
phase_done() {
  local now
  now=$(date +%s)
  log "$1 in $((now - phase_start)) s"
  phase_start=$now
}

source "$root/scripts/apt-install.sh"
apt_install setup "${packages[@]}"
phase_done "packages"

cuda_home="${CUDA_HOME:-/usr/local/cuda}"
if [[ ! -x "$cuda_home/bin/ptxas" ]]; then
  log "note: no ptxas under $cuda_home: GPU targets can be lowered but not assembled"
fi

launcher=()
# ccache, where installed, lets several checkouts of the tree share objects.
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi

if [[ ! -f "$build/build.ninja" ]]; then
  log "configuring $build"
  cmake -G Ninja -S "$root" -B "$build" "${launcher[@]}" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DMLIR_DIR="$llvm/lib/cmake/mlir" \
    -DLLVM_EXTERNAL_LIT="$llvm/bin/lit" \
    -DLLVM_USE_LINKER=lld \
    -DPython3_EXECUTABLE=/usr/bin/python3 \
    -DCONV3D_CUDA_HOME="$cuda_home" >/dev/null
fi

log "building the tools with $jobs jobs"
cmake --build "$build" -j "$jobs" --target conv3d-run conv3d-opt
phase_done "tools built"

log "default example: causal 3x3x3 bf16 convolution on the CPU target"
"$build/bin/conv3d-run" --target=cpu --dtype=bf16 \
  --input-shape=1,10,16,16,32 --filter-shape=3,3,3,32,48 \
  --padding=2,0,1,1,1,1 --bias --activation=silu --repeat=3
phase_done "example run"

log "building the rest (unit tests, test tools) with $jobs jobs"
cmake --build "$build" -j "$jobs"
phase_done "rest built"
