#!/usr/bin/env bash
# The tenth session's GPU jobs (bench/RESULTS.md), from the repository root
# with the build carried as .gpu-carry; logs under $OUT:
#   grad  GPU/gradients-run.test (dgrad and wgrad against the float64
#         reference on the GPU), bench/grad_bench.py on the suite's shapes but the two largest
#         (wgrad, or $KINDS, against cuDNN: the weight gradient's forward
#         form with batch 1, whose per-depth-slice tiles are full), then
#         the U-Net training step with the library's weight gradient
#         (bench/train_step.py --library-wgrad).
#   nets  bench/networks.py, every network, with Python's garbage collector
#         off during the timed calls (bench/timing.py's new default): were
#         collections what slowed small layers late in the ninth session's
#         run (U-Net bottleneck 0.37x there, 1.56x alone)?
set -u
phase="${1:-}"
JOB_BUDGET_S=570 source "$(dirname "${BASH_SOURCE[0]}")/../job-setup.sh"
case "$phase" in
  grad)
    LIT_FILTER='GPU/gradients-run' timeout "$(left 240)" scripts/gpu/run.sh lit 2>&1 | tail -5 \
      || echo "gradients lit rc=$?"
    timeout "$(left 300)" python3 bench/grad_bench.py --target sm90 --time-budget 240 \
      --kinds ${KINDS:-wgrad} --kernels --only modelopt_seed wan_mid_full wan_chunk_mid wan_chunk_192 \
      latent_in_16 video_r3d_64 video_s2_64 unet3d_32 pointwise_384 time_down_384 \
      --out "$out" > "$out/grad-bench.log" 2>&1 || echo "grad_bench rc=$?"
    grep -E "^\||geomean|error|Error" "$out/grad-bench.log" | head -40
    elapsed grad
    timeout -s ABRT "$(left 250)" python3 -X faulthandler -u bench/train_step.py --models unet \
      --library-wgrad --reps 3 --warmup 1 --profile-reps 1 --json "$out/train_step-unet-libwgrad.json" \
      > "$out/train_step-unet-libwgrad.log" 2>&1 || echo "train_step rc=$?"
    grep -E "CHECK|speed|peak|step |fallbacks|conv" "$out/train_step-unet-libwgrad.log" | cut -c1-300 | head -30
    elapsed trainstep ;;
  nets)
    timeout "$(left 560)" python3 bench/networks.py --out "$out/net" --wall-reps 3 --budget-s 500 \
      > "$out/net.log" 2>&1 || echo "networks rc=$?"
    grep -E "^\| [a-z]|networks whose|FAIL|geomean" "$out/net.log" | head -60
    elapsed nets ;;
  *) echo "usage: round10.sh grad|nets" >&2; exit 2 ;;
esac
