# Sourced on the GPU machine: unpacks the carried Debian runtime libraries
# once and sets up PATH/LD_LIBRARY_PATH for the carried binaries.
carry="${CONV3D_CARRY:-$PWD/.gpu-carry}"
rt=/tmp/conv3d-runtime
if [ ! -d "$rt/usr/lib/llvm-22/lib" ]; then
  for deb in "$carry"/debs/*.deb; do dpkg -x "$deb" "$rt"; done
fi
export LD_LIBRARY_PATH="$carry/lib:$rt/usr/lib/llvm-22/lib:$rt/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
export PATH="$carry/bin:$carry/tools:$PATH"
export PYTHONPATH="$carry/tools:$PWD/python:${PYTHONPATH:-}"
export CONV3D_LIB="$carry/lib/libConv3d.so"
export CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}"
