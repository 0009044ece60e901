#!/usr/bin/env bash
# AddressSanitizer + UndefinedBehaviorSanitizer build of the library, the
# tools, the unit tests and the libFuzzer targets, in its own build
# directory (CMake option CONV3D_SANITIZE; the default build/ is left
# alone), then the test suite over it.
#
#   scripts/sanitize.sh                 # build, then the whole suite but the Python test
#   scripts/sanitize.sh build           # build only
#   scripts/sanitize.sh test [LIT ARGS] # the suite (or what LIT ARGS select)
#
# Every UB check is fatal; an ASan or LSan report fails the test it happens
# in. libMLIR.so (Debian's) is not instrumented: errors inside it are found
# only where they touch memory our code allocated. The Python test is left
# out: python3 is not instrumented and cannot load the instrumented
# libConv3d.so (it needs the ASan runtime linked into the executable); so
# are the Python package's tests (test/Python), the pages whose examples
# include Python (test/Docs: python, readme, streaming) and the install
# tests (test/Install), which load the library from python3 or build
# consumers without the sanitizer runtime.
# Leak suppressions: scripts/sanitizers/lsan.supp (why each one is there).
# Built without the precompiled header (CONV3D_PRECOMPILED_HEADERS=OFF), so
# that CI also checks that every file includes what it uses.
#
# Environment: CONV3D_SANITIZE_BUILD_DIR (default build-sanitize),
# CONV3D_JOBS, CUDA_HOME, CONV3D_SKIP_APT=1 (libclang-rt-22-dev, the
# sanitizer runtimes, is installed already).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${CONV3D_SANITIZE_BUILD_DIR:-$root/build-sanitize}"
jobs="${CONV3D_JOBS:-$(nproc)}"
llvm=/usr/lib/llvm-22
mode="${1:-all}"
[[ $# -gt 0 ]] && shift

log() { printf '[sanitize] %s\n' "$*"; }

# The sanitizer and libFuzzer runtimes (CONV3D_SKIP_APT=1: installed already).
source "$root/scripts/apt-install.sh"
apt_install sanitize libclang-rt-22-dev

# The options every sanitized process runs with (lit passes them on).
export ASAN_OPTIONS="${ASAN_OPTIONS:-allow_user_poisoning=0:detect_leaks=1:detect_stack_use_after_return=1:check_initialization_order=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$root/scripts/sanitizers/lsan.supp:print_suppressions=0}"
export ASAN_SYMBOLIZER_PATH="${ASAN_SYMBOLIZER_PATH:-$llvm/bin/llvm-symbolizer}"

if [[ "$mode" == all || "$mode" == build ]]; then
  if [[ ! -f "$build/build.ninja" ]]; then
    log "configuring $build"
    cmake -G Ninja -S "$root" -B "$build" \
      -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
      -DMLIR_DIR="$llvm/lib/cmake/mlir" \
      -DLLVM_EXTERNAL_LIT="$llvm/bin/lit" \
      -DLLVM_USE_LINKER=lld \
      -DPython3_EXECUTABLE=/usr/bin/python3 \
      -DCONV3D_CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}" \
      -DCONV3D_SANITIZE=ON \
      -DCONV3D_PRECOMPILED_HEADERS=OFF >/dev/null
  fi
  log "building with $jobs jobs"
  start=$(date +%s)
  cmake --build "$build" -j "$jobs"
  log "built in $(( $(date +%s) - start )) s"
fi

if [[ "$mode" == all || "$mode" == test ]]; then
  start=$(date +%s)
  log "test suite under ASan+UBSan"
  "$llvm/bin/lit" -sv --filter-out 'python-api|Python/|Install/|Docs/(python|readme|streaming)\.test' "$@" \
    "$build/test" "$build/unittests"
  log "tested in $(( $(date +%s) - start )) s"
fi
