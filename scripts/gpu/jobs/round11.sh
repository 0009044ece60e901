#!/usr/bin/env bash
# The eleventh session's GPU jobs (bench/RESULTS.md), from the repository
# root with the build carried as .gpu-carry; logs under $OUT:
#   folds  the weight gradient with each fold (auto, width, height-width;
#          conv3d-lower-conv-gradients' wgrad-fold) against cuDNN: the
#          suite's shapes but the two largest, then $RANDOM_N random layers
#          of seed $SEED (bench/netbench/random_layers.py), which the
#          fold choice was not fitted on.
#   stems  the weight gradients of seed 61's stems (C = 1-2) with each fold,
#          per-kernel times (torch.profiler).
#   dgrad  bench/grad_bench.py --kinds dgrad on the suite (the strided
#          phases' vectorized inserts, unmeasured since 057bea3).
set -u
phase="${1:-}"
JOB_BUDGET_S=570 source "$(dirname "${BASH_SOURCE[0]}")/../job-setup.sh"
folds="auto width height-width"
case "$phase" in
  folds)
    timeout "$(left 300)" python3 bench/grad_bench.py --target sm90 --time-budget 220 \
      --kinds wgrad --wgrad-folds $folds --only modelopt_seed wan_mid_full wan_chunk_mid \
      wan_chunk_192 latent_in_16 video_r3d_64 video_s2_64 unet3d_32 pointwise_384 \
      time_down_384 --out "$out/suite" > "$out/folds-suite.log" 2>&1 || echo "suite rc=$?"
    grep -E "^\||geomean|geometric|error|Error" "$out/folds-suite.log" | head -40
    elapsed suite
    timeout "$(left 600)" python3 bench/grad_bench.py --target sm90 \
      --time-budget $(( $(left 600) - 45 )) --kinds wgrad --wgrad-folds $folds --random "${RANDOM_N:-40}" --seed "${SEED:-61}" \
      --out "$out/random" > "$out/folds-random.log" 2>&1 || echo "random rc=$?"
    grep -E "^\||geometric|error|Error" "$out/folds-random.log" | head -80
    elapsed random ;;
  stems)
    timeout "$(left 200)" python3 bench/grad_bench.py --target sm90 --kinds wgrad --kernels \
      --wgrad-folds $folds --random 40 --seed 61 --only r10_stem r25_stem r26_stem r30_stem \
      --out "$out/stems" > "$out/stems.log" 2>&1 || echo "stems rc=$?"
    grep -E "^\||kernels_us" "$out/stems.log" | cut -c1-1500 | head -40
    elapsed stems ;;
  dgrad)
    timeout "$(left 600)" python3 bench/grad_bench.py --target sm90 \
      --time-budget $(( $(left 600) - 60 )) --kinds dgrad --only modelopt_seed wan_mid_full wan_chunk_mid wan_chunk_192 latent_in_16 \
      video_r3d_64 video_s2_64 unet3d_32 pointwise_384 time_down_384 \
      --out "$out/dgrad" > "$out/dgrad.log" 2>&1 || echo "dgrad rc=$?"
    grep -E "^\||geometric|error|Error" "$out/dgrad.log" | head -40
    elapsed dgrad ;;
  *) echo "usage: round11.sh folds|stems|dgrad" >&2; exit 2 ;;
esac
