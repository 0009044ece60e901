#!/usr/bin/env bash
# The measurements of the seventh session (bench/RESULTS.md), one device
# call per phase, from the repository root with the build carried as
# .gpu-carry; logs and results.tgz under $OUT:
#   vae     scripts/gpu/jobs/vae.sh (the folded decoder on the GPU, the 480p
#           decode with --fold-upsample), then the U-Net training step
#           (bench/train_step.py, with the channels-last weight-gradient
#           fallback of 9de6d38);
#   train   the VAE-block training step (its float32 reference now without
#           cuDNN's benchmark search), then every network again
#           (swin3d_t's 0.60x of the sixth session was noisy) and the
#           seed-51 random sweep.
set -u
phase="${1:-}"
JOB_BUDGET_S=570 source "$(dirname "${BASH_SOURCE[0]}")/../job-setup.sh"
t0=$(date +%s)
elapsed() { echo "$1 done at $(( $(date +%s) - t0 )) s"; }
train() {  # train MODEL SECONDS
  timeout -s ABRT "$(left "$2")" python3 -X faulthandler -u bench/train_step.py --models "$1" \
    --reps 3 --warmup 1 --profile-reps 1 --json "$out/train_step-$1.json" \
    > "$out/train_step-$1.log" 2>&1 || echo "$1 rc=$?"
  grep -E "CHECK|speed|peak|step |fallbacks" "$out/train_step-$1.log" | cut -c1-300 | head -20
  elapsed "$1"
}
case "$phase" in
  vae)
    OUT="$out/vae" timeout "$(left 345)" bash scripts/gpu/jobs/vae.sh > "$out/vae-all.log" 2>&1 \
      || echo "vae rc=$?"
    grep -E "PASS|FAIL|status|speedup|peak|480p|720p" "$out/vae-all.log" | cut -c1-300 | head -30
    elapsed vae
    train unet 220 ;;
  train)
    train vae_block 200
    timeout "$(left 150)" python3 bench/networks.py --out "$out/net" --wall-reps 3 > "$out/net.log" 2>&1 \
      || echo "net rc=$?"
    tail -25 "$out/net.log"
    elapsed networks
    timeout "$(left 200)" python3 bench/networks.py --out "$out/sweep51" --random 300 --seed 51 \
      > "$out/sweep51.log" 2>&1 || echo "sweep rc=$?"
    tail -12 "$out/sweep51.log"
    elapsed sweep ;;
  *) echo "usage: round7.sh vae|train" >&2; exit 2 ;;
esac
tar -C "$out" -czf /tmp/results.tgz . && mv /tmp/results.tgz "$out/results.tgz"
