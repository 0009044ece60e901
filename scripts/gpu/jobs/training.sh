#!/usr/bin/env bash
# The training branch's GPU job (issue 22). Run on the GPU machine from the
# repository root after `source scripts/gpu/env.sh`; writes its logs under
# $OUT; about 9 minutes (the lit test alone took over 90 s on an H200):
#   1. lit: test/GPU/gradients-run.test (dgrad/wgrad on sm90 and sm80
#      against the float64 reference);
#   2. scripts/gpu/training_check.py: autograd through conv3d.torch.Conv3d
#      and ConvTranspose3d against PyTorch, convert() of nn.ConvTranspose3d,
#      torch.compile(fullgraph=True) of a training step;
#   3. bench/grad_bench.py: dgrad and wgrad against cuDNN
#      (torch.nn.grad.conv3d_input / conv3d_weight, bf16 channels_last_3d,
#      cudnn.benchmark, L2 flushed, medians) on the suite shapes the issue
#      names (bench/shapes.json: seven of twelve), stopping
#      new shapes after 110 s (every step has its own timeout: at most 550 s).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../.."
out="${OUT:-/tmp/conv3d-out}"
mkdir -p "$out"
status=0
echo "=== lit: gradients on the GPU ==="
LIT_FILTER='GPU/gradients-run' timeout 300 scripts/gpu/run.sh lit 2>&1 | tail -20 || status=1
[[ -f "$out/lit.log" ]] && cp "$out/lit.log" "$out/training-lit.log"
echo "=== training check (PyTorch autograd, torch.compile) ==="
timeout 80 python3 scripts/gpu/training_check.py 2>&1 | tee "$out/training-check.log" || status=1
echo "=== dgrad / wgrad against cuDNN ==="
timeout 170 python3 bench/grad_bench.py --target sm90 --time-budget 110 --out "$out" \
  --only modelopt_seed wan_chunk_192 latent_in_16 video_s2_64 unet3d_32 pointwise_384 time_down_384 2>&1 \
  | tee "$out/grad-bench.log" || status=1
exit $status
