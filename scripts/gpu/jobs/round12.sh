#!/usr/bin/env bash
# The twelfth session's GPU jobs (bench/RESULTS.md), from the repository
# root with the build carried as .gpu-carry; logs under $OUT:
#   lit    test/GPU/gradients-run.test (dgrad and wgrad on sm90 and sm80,
#          dgrad through each activation included).
#   act    dgrad through an activation ($ACT, default silu) on the suite:
#          cuDNN's dgrad then aten's activation backward (what autograd
#          runs) against ours with the derivative fused in the epilogue.
#   train  bench/train_step.py on the U-Net and the VAE decoder block.
set -u
phase="${1:-}"
JOB_BUDGET_S=570 source "$(dirname "${BASH_SOURCE[0]}")/../job-setup.sh"
suite_shapes="modelopt_seed wan_mid_full wan_chunk_mid wan_chunk_192 latent_in_16 \
video_r3d_64 video_s2_64 unet3d_32 pointwise_384 time_down_384"
case "$phase" in
  lit)
    LIT_FILTER='GPU/gradients-run' timeout "$(left 300)" scripts/gpu/run.sh lit 2>&1 \
      | tail -8 || echo "lit rc=$?"
    [[ -f "$out/lit.log" ]] && grep -E "FAIL|error" "$out/lit.log" | head -20
    elapsed lit ;;
  act)
    timeout "$(left 560)" python3 bench/grad_bench.py --target sm90 \
      --time-budget $(( $(left 560) - 60 )) --kinds dgrad --activation "${ACT:-silu}" \
      --only $suite_shapes --out "$out/act-${ACT:-silu}" > "$out/act-${ACT:-silu}.log" 2>&1 \
      || echo "act rc=$?"
    grep -E "^\||geometric|error|Error" "$out/act-${ACT:-silu}.log" | head -40
    elapsed act ;;
  train)
    train unet 270
    train vae_block 270 ;;
  *) echo "usage: round12.sh lit|act|train" >&2; exit 2 ;;
esac
