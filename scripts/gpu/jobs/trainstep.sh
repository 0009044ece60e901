#!/usr/bin/env bash
# The `trainstep` branch's GPU job (issue 22): bench/train_step.py, a
# training step (forward + backward) against cuDNN. Run on the GPU machine
# from the repository root (the build carried as .gpu-carry); writes its
# logs and JSON under $OUT; about 2-4 minutes, at most 290 s (each step
# has its own timeout, cut to what is left of 280 s):
#   0. on the CPU target, with this machine's PyTorch (2.4+: the custom-op
#      paths, which the CPU machines' PyTorch 1.13 cannot run):
#      test/Inputs/python_causal_autograd_check.py (CausalConv3d's backward
#      through conv3d.torch.conv3d against float64 autograd of its twin) and
#      train_step.py --quick (small models, conv3d.torch.convert());
#   1. unet: nnU-Net's 3d_fullres U-Net (6 stages, 32-320 channels, instance
#      norm + LeakyReLU, strided convs, ConvTranspose3d), batch 2, 128^3
#      patch, bf16 channels_last_3d;
#   2. vae_block: WAN 2.1's decoder residual block, 192 channels, 8 frames
#      of 240 x 416, bf16 channels_last_3d.
# For each, cuDNN (cudnn.benchmark) against the same model after
# conv3d.torch.convert(): conv kernel time (torch.profiler, the kernels
# classified and listed by name), whole-step time (interleaved, L2
# flushed, medians), peak memory (max_memory_allocated), gradients' rel.
# L2 against float32 (TF32 off); CHECK lines at the end of each log.
JOB_BUDGET_S=280 source "$(dirname "${BASH_SOURCE[0]}")/../job-setup.sh"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv \
  | tee "$out/trainstep-device.log"
echo "=== CausalConv3d backward (CPU target) ==="
timeout "$(left 60)" python3 test/Inputs/python_causal_autograd_check.py 2>&1 \
  | tee "$out/causal-autograd.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
echo "=== bench/train_step.py --quick (CPU target) ==="
timeout "$(left 60)" python3 bench/train_step.py --quick --target cpu --reps 2 --warmup 1 \
  --profile-reps 1 --json "$out/train_step-quick.json" 2>&1 | tee "$out/train_step-quick.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
for model in unet vae_block; do
  echo "=== bench/train_step.py --models $model ==="
  timeout "$(left 150)" python3 bench/train_step.py --models "$model" --reps 5 --warmup 2 \
    --profile-reps 3 --json "$out/train_step-$model.json" 2>&1 \
    | tee "$out/train_step-$model.log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
done
echo "trainstep job status $status" | tee "$out/trainstep-status.txt"
exit $status
