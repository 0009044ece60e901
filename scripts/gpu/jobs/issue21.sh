#!/bin/bash
# Issue 21 on the GPU machine (run from the repository root with the build
# carried as .gpu-carry): kernel timelines of the odd-channel and small-N
# layers (bench/odd_layers.json), r(2+1)d-18 and r3d-18 against cuDNN, and
# two held-out random sets with every candidate configuration timed (seed 5,
# as in runs 10 and 12, and seed 11, never used to choose anything).
# Logs under $OUT. About 4 minutes on an H200.
source scripts/gpu/env.sh
nvidia-smi --query-gpu=name --format=csv > "$OUT/gpu.txt"
python3 bench/profile_kernels.py --suite bench/odd_layers.json --target sm90 --runs 2 > "$OUT/timeline.txt" 2>&1
python3 bench/networks.py --networks r2plus1d_18 r3d_18 --sizes 112 224 --wall-reps 0 --out "$OUT/net" > "$OUT/net.log" 2>&1
for seed in 5 11; do
  python3 bench/networks.py --out "$OUT/cand$seed" --random 120 --seed $seed --candidates --budget-s 100 > "$OUT/cand$seed.log" 2>&1
done
echo done
