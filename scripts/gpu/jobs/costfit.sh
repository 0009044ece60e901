#!/bin/bash
# Issue 21, cost-model refit on the GPU machine (run from the repository root
# with the build carried as .gpu-carry). Two phases, one per device call:
#   costfit.sh fit       every candidate configuration timed on three fresh
#                        random sets (seeds 31-33): the data the constants
#                        are fitted on (bench/costmodel/fit.py)
#   costfit.sh validate  the held-back sets: candidates of seeds 41 and 11
#                        (bench/costmodel/replay.py replays a build's picks
#                        on them without a GPU)
#   costfit.sh sweep     the 300-layer random sweep (seed 51) against cuDNN
#                        and every network of bench/networks.py
# Logs under $OUT. Each phase about 8 minutes on an H200.
set -u
source scripts/gpu/env.sh
nvidia-smi --query-gpu=name --format=csv > "$OUT/gpu.txt"
case "${1:-}" in
  fit)
    for seed in 31 32 33; do
      python3 bench/networks.py --out "$OUT/cand$seed" --random 120 --seed $seed \
        --candidates --budget-s 130 > "$OUT/cand$seed.log" 2>&1
    done ;;
  validate)
    for seed in 41 11; do
      python3 bench/networks.py --out "$OUT/cand$seed" --random 120 --seed $seed \
        --candidates --budget-s 110 > "$OUT/cand$seed.log" 2>&1
    done
    ;;
  sweep)
    # The whole measurement on one commit: the 300-layer random
    # sweep (seed 51, never used to choose anything) and every network.
    timeout 330 python3 bench/networks.py --out "$OUT/sweep51" --random 300 --seed 51 \
      > "$OUT/sweep51.log" 2>&1
    timeout 220 python3 bench/networks.py --out "$OUT/net" --wall-reps 3 > "$OUT/net.log" 2>&1 ;;
  *) echo "usage: costfit.sh fit|validate|sweep" >&2; exit 2 ;;
esac
# The tool returns a few files per call: one archive of everything.
tar -C "$OUT" -czf "$OUT/results.tgz" --exclude results.tgz . && echo done
