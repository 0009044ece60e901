#!/usr/bin/env bash
# The GPU job of the `grouped-tc` branch (issue 23, item 2: the sm80
# kernel's grouped implicit GEMM, groups of multiples of 8 channels and
# filters). Run on the GPU machine from the repository root, after
# `source scripts/gpu/env.sh` (the carried build in .gpu-carry):
#   1. lit: test/GPU/sm80-grouped-run.test (the grouped GEMM: 32 groups of
#      8 and 16 groups of 16 channels at C = F = 256, ResNeXt-like 32 x 16
#      at C = 512, an odd f16 geometry with the epilogue; sm80 and sm90
#      targets) and test/GPU/depthwise-run.test (the depthwise kernel,
#      which keeps depthwise and small groups), each case on fresh random
#      data against the float64 reference;
#   2. bench/grouped.py --target sm90: the memory limit, cuDNN
#      (channels_last_3d and NCDHW) and ours, with the kernel ours ran
#      (depthwise or sm80), on every row: X3D, CSN, MViT-v2 pooling, the
#      grouped rows (8 and 16 channels a group) and the ResNeXt-like rows
#      (32 groups of 4: depthwise kernel; of 16: grouped GEMM);
#   3. the grouped GEMM rows again with --tune (the tuner's candidates
#      timed, its choice used), to see how far the heuristic's tile is.
# Issue 23's targets: >= 1.2x cuDNN with 16+ channels per group, >= 3x with
# 8. Logs and the JSON rows go to $OUT. About 4-5 minutes, every step
# bounded (`left`: at most 340 s in all).
source "$(dirname "${BASH_SOURCE[0]}")/../job-setup.sh"
echo "=== device ==="
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv \
  | tee "$out/grouped-tc-device.log"
echo "=== GPU lit tests: sm80 grouped GEMM, depthwise ==="
LIT_FILTER='GPU/(sm80-grouped-run|depthwise-run)' OUT="$out" \
  timeout "$(left 110)" bash scripts/gpu/run.sh lit || status=1
[[ -f "$out/lit.log" ]] && cp "$out/lit.log" "$out/grouped-tc-lit.log"
echo "=== bench/grouped.py (the compiler's picks) ==="
timeout "$(left 150)" python3 bench/grouped.py --target sm90 \
  --json "$out/grouped-tc.json" 2>&1 | tee "$out/grouped-tc-bench.log" || status=1
echo "=== bench/grouped.py --tune (grouped GEMM rows) ==="
timeout "$(left 80)" python3 bench/grouped.py --target sm90 --tune \
  --only grouped8_c256_8x28x28 grouped16_c256_8x28x28 resnext_32x16_c512_8x14x14 \
  --json "$out/grouped-tc-tuned.json" 2>&1 | tee "$out/grouped-tc-tuned.log" || status=1
exit $status
