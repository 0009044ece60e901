#!/usr/bin/env bash
# Stages what the GPU machine needs into .gpu-carry/ (git-ignored), to be
# named in the device tool's `carry`. That machine (Ubuntu, CUDA, PyTorch)
# has no LLVM/MLIR, so it gets:
#   debs/   Debian's LLVM/MLIR runtime libraries (libllvm22, libmlir-22,
#           libz3-4), unpacked there with dpkg -x
#   bin/ lib/ unittests/   the project's binaries, stripped
#   share/conv3d/ptx-emulator   the PTX emulator (conv3d-run --emulate)
#   tools/  FileCheck, not, count and lit (for the GPU lit tests)
# The carry limit is 64 MiB for everything; this prints the total.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${CONV3D_BUILD_DIR:-$root/build}"
out="$root/.gpu-carry"
llvm=/usr/lib/llvm-22

mkdir -p "$out/debs" "$out/bin" "$out/lib" "$out/unittests" "$out/tools"
if ! ls "$out"/debs/libmlir-22_*.deb >/dev/null 2>&1; then
  (cd "$out/debs" && apt-get download libllvm22 libmlir-22 libz3-4 2>/dev/null)
fi
for tool in conv3d-run conv3d-sweep conv3d-opt conv3d-gpu-info conv3d-host-overhead; do
  install -m 755 "$build/bin/$tool" "$out/bin/$tool"
done
install -m 755 "$build/lib/libConv3d.so" "$out/lib/libConv3d.so"
# The PTX emulator (conv3d-run --emulate): its driver and Python package.
install -m 755 "$build/lib/libconv3d-emulated-cuda.so" "$out/lib/libconv3d-emulated-cuda.so"
rm -rf "$out/share/conv3d/ptx-emulator" && mkdir -p "$out/share/conv3d" &&
  cp -r "$build/share/conv3d/ptx-emulator" "$out/share/conv3d/ptx-emulator"
install -m 755 "$build/unittests/Conv3dUnitTests" "$out/unittests/Conv3dUnitTests"
strip --strip-unneeded "$out"/bin/* "$out"/lib/*.so "$out"/unittests/*
for tool in FileCheck not count; do
  install -m 755 "$llvm/bin/$tool" "$out/tools/$tool"
done
rm -rf "$out/tools/lit" && cp -r "$llvm/utils/lit/lit" "$out/tools/lit"
find "$out/tools/lit" -name __pycache__ -prune -exec rm -rf {} +
du -sh "$out"
# The device tool's 64 MiB is for the carry and the working tree together.
# With LLVM 22.1.8's runtime debs (51 MiB) the whole of .gpu-carry no
# longer fits: name the subfolders a job needs (the unit tests, for one,
# in a second call while the machine is warm and has unpacked the debs).
# (Counted as the disk holds them, in whole blocks, as the tool refused a
# carry of 63.5 MiB of bytes that took 66.6 MiB of blocks.)
tree=$(cd "$root" && git ls-files -z | xargs -0 du -sk --total | tail -1 | cut -f1)
total=$(( tree + $(du -sk "$out" | cut -f1) ))
if [ "$total" -gt $(( 64 * 1024 )) ]; then
  echo "stage.sh: .gpu-carry and the tree take $(( total >> 10 )) MiB, over the 64 MiB carry;" \
    "carry subfolders, e.g. [\".gpu-carry/debs\", \".gpu-carry/lib\", \".gpu-carry/bin\", \".gpu-carry/tools\"]"
  for d in "$out"/*; do printf '  %s %s MiB\n' "${d#$root/}" $(( $(du -sk "$d" | cut -f1) >> 10 )); done
fi
