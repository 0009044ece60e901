#!/usr/bin/env bash
# The PTX emulator against the H100 (issue 24), on the GPU machine with
# .gpu-carry/ beside the tree (scripts/gpu/stage.sh carries the emulated
# driver and the emulator too):
#   1. scripts/gpu/wgmma_numerics.cu: wgmma's and mma.sync's f32 results on
#      hashed inputs (TRIALS per type and distribution), for
#      wgmma_numerics_fit.py, which checks the emulator's MMA model on them;
#      approx_functions.cu (the approximate instructions' results) and
#      smem_addresses.cu (the shared window's addresses);
#   2. scripts/gpu/emulator_check.py gpu: COUNT random sm90 cases (SEED; and
#      SM80 cases of the sm80 kernel) on the H100, outputs kept;
#   3. with EMULATE=1, the same cases in the emulator (JOBS at a time),
#      compared bit for bit; without, that step runs elsewhere on the
#      results: tar xzf cases.tgz && emulator_check.py emulate cases.
# Results land in $OUT (few files: the cases' folder is packed into
# cases.tgz); the cases run in $WORK (default /tmp/conv3d-emulator-check).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
source scripts/gpu/env.sh
out="${OUT:-/tmp/conv3d-out}"
work="${WORK:-/tmp/conv3d-emulator-check}"
mkdir -p "$out" "$work"
status=0
nvcc_() { "$CUDA_HOME/bin/nvcc" -gencode arch=compute_90a,code=sm_90a -O2 "$@" 2>&1 | grep -v C7520; }
echo "=== wgmma and mma.sync numerics ==="
nvcc_ -o /tmp/wgmma_numerics scripts/gpu/wgmma_numerics.cu
/tmp/wgmma_numerics "$out/wgmma_numerics.bin" "${TRIALS:-100}" || status=1
python3 scripts/gpu/wgmma_numerics_fit.py "$out/wgmma_numerics.bin" h100 || true
echo "=== approximate instructions ==="
nvcc_ -o /tmp/approx_functions scripts/gpu/approx_functions.cu
/tmp/approx_functions "$out/approx_functions.bin" || status=1
echo "=== shared-window addresses ==="
nvcc_ -o /tmp/smem_addresses scripts/gpu/smem_addresses.cu
/tmp/smem_addresses | tee "$out/smem_addresses.txt"
echo "=== ${COUNT:-36} sm90 cases (and ${SM80:-6} sm80) on the GPU ==="
python3 scripts/gpu/emulator_check.py gpu "$work/cases" --count "${COUNT:-36}" \
    --seed "${SEED:-1}" --sm80 "${SM80:-6}" || status=1
if [[ "${EMULATE:-0}" == 1 ]]; then
  echo "=== the same cases in the emulator ==="
  python3 scripts/gpu/emulator_check.py emulate "$work/cases" \
      --jobs "${JOBS:-$(( $(nproc) - 2 ))}" || status=1
fi
tar czf "$out/cases.tgz" -C "$work" cases
exit $status
