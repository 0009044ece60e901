#!/usr/bin/env bash
# The GPU job of the `grouped` branch (issue 23: grouped and depthwise
# convolutions). Run on the GPU machine from the repository root, after
# `source scripts/gpu/env.sh` (the carried build in .gpu-carry):
#   1. the GPU lit tests of the depthwise kernel (test/GPU/depthwise-*.test:
#      conv3d-run on sm80 and sm90 code, each case against the float64
#      reference);
#   2. bench/grouped.py: the memory limit, cuDNN (channels_last_3d and
#      NCDHW) and ours on the X3D, CSN, MViT-v2 pooling and grouped shapes.
# Logs and the benchmark's JSON go to $OUT. About 2-3 minutes.
source "$(dirname "${BASH_SOURCE[0]}")/../job-setup.sh"
echo "=== device ==="
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv \
  | tee "$out/grouped-device.log"
echo "=== GPU lit tests: depthwise ==="
LIT_FILTER='GPU/depthwise' OUT="$out" timeout 240 bash scripts/gpu/run.sh lit || status=1
echo "=== bench/grouped.py ==="
timeout 240 python3 bench/grouped.py --target sm90 --json "$out/grouped.json" 2>&1 \
  | tee "$out/grouped-bench.log" || status=1
exit $status
