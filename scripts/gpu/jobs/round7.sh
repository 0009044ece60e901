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
#           seed-51 random sweep;
#   graphs  Conv3dWanDecoder(cuda_graphs=True): test/Inputs/wan_vae_check.py
#           graphs and its lit test, then bench/vae_decode.py with
#           --cuda-graphs (480p and 720p of 3 latent frames, eager in the
#           same process; 720p of 21 frames, the issue's clip);
#   multi   (nvidia-h100-x4) the graphs check, scripts/gpu/jobs/vae-multi.sh with
#           VAE_GRAPHS=1 (one GPU, then the height split on 2 and 4 GPUs,
#           each step a CUDA graph, NCCL point-to-point inside), then the
#           4-GPU split without graphs in the same job;
#   multi21 (nvidia-h100-x4) the issue's 720p clip (21 latent frames) split
#           over 4 GPUs with graphs, and on rank 0's GPU alone in the same
#           process (--one-gpu-baseline);
#   halo    (nvidia-h100-x4) the split's two ways to the neighbours' rows,
#           --split-halo copy and correct, on 2 and 4 GPUs with graphs, each
#           with rank 0's one-GPU time from the same run;
#   unet    the U-Net training step alone, with its kernels by the ops that
#           launched them (where the conv glue copies and cuDNN's
#           transposes come from; issue 22).
set -u
phase="${1:-}"
JOB_BUDGET_S=570 source "$(dirname "${BASH_SOURCE[0]}")/../job-setup.sh"
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
  graphs)
    timeout "$(left 120)" python3 test/Inputs/wan_vae_check.py graphs > "$out/graphs-check.log" 2>&1 \
      || echo "graphs check rc=$?"
    tail -n 12 "$out/graphs-check.log"
    LIT_FILTER='GPU/wan-vae-graphs' OUT="$out" timeout "$(left 90)" bash scripts/gpu/run.sh lit \
      > "$out/lit-all.log" 2>&1 || echo "lit rc=$?"
    grep -E "^(FAIL|PASS|  Passed|  Failed)" "$out/lit.log" | tail -5
    elapsed check
    timeout "$(left 170)" python3 bench/vae_decode.py --sizes 480p,720p --frames 3 --repeat 3 \
      --profile-frames 2 --no-reference --cuda-graphs --json "$out/vae-graphs.json" \
      > "$out/vae-graphs.log" 2>&1 || echo "vae rc=$?"
    grep -vE "top:|Warning|warn" "$out/vae-graphs.log" | head -20
    elapsed "vae 3 frames"
    timeout "$(left 200)" python3 bench/vae_decode.py --sizes 720p --frames 21 --repeat 2 \
      --profile-frames 1 --top-kernels 0 --no-reference --cuda-graphs \
      --json "$out/vae-graphs-21.json" > "$out/vae-graphs-21.log" 2>&1 || echo "vae21 rc=$?"
    grep -vE "top:|Warning|warn" "$out/vae-graphs-21.log" | head -12
    elapsed "vae 21 frames" ;;
  multi)
    export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
    timeout "$(left 90)" python3 test/Inputs/wan_vae_check.py graphs > "$out/graphs-check.log" 2>&1 \
      || echo "graphs check rc=$?"
    grep -E "graphs|timer|Error" "$out/graphs-check.log" | head -8
    VAE_GRAPHS=1 OUT="$out/graphs" timeout "$(left 350)" bash scripts/gpu/jobs/vae-multi.sh \
      > "$out/multi-graphs.log" 2>&1 || echo "multi graphs rc=$?"
    grep -E "latent|split vs|stages|status|Error|error" "$out/multi-graphs.log" | cut -c1-300 | head -20
    elapsed "multi with graphs"
    timeout "$(left 150)" python3 -m torch.distributed.run --standalone --nproc_per_node 4 \
      bench/vae_decode.py --sizes 720p --frames 3 --repeat 2 --profile-frames 2 \
      --json "$out/torchrun-4-eager.json" > "$out/torchrun-4-eager.log" 2>&1 || echo "4 eager rc=$?"
    grep -E "latent|split vs|stages" "$out/torchrun-4-eager.log" | cut -c1-300
    elapsed "4 GPUs without graphs" ;;
  multi21)
    export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
    timeout "$(left 150)" python3 -m torch.distributed.run --standalone --nproc_per_node 4 \
      bench/vae_decode.py --sizes 720p --frames 21 --repeat 2 --profile-frames 2 --cuda-graphs \
      --one-gpu-baseline --json "$out/torchrun-4-21.json" > "$out/torchrun-4-21.log" 2>&1 \
      || echo "4 GPUs 21 frames rc=$?"
    grep -E "latent|one GPU|split vs|stages" "$out/torchrun-4-21.log" | cut -c1-300
    elapsed "4 GPUs, 21 frames" ;;
  halo)
    export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
    for n in 2 4; do
      for mode in copy correct; do
        timeout "$(left 120)" python3 -m torch.distributed.run --standalone --nproc_per_node "$n" \
          bench/vae_decode.py --sizes 720p --frames 3 --repeat 3 --profile-frames 2 --cuda-graphs \
          --split-halo "$mode" --one-gpu-baseline --json "$out/halo-$n-$mode.json" \
          > "$out/halo-$n-$mode.log" 2>&1 || echo "$n GPUs $mode rc=$?"
        grep -E "ranks|one GPU|split vs|stages" "$out/halo-$n-$mode.log" | cut -c1-300
        elapsed "$n GPUs, split_halo=$mode"
      done
    done ;;
  unet)
    train unet 300
    grep -E "by op" "$out/train_step-unet.log" | cut -c1-1200 ;;
  *) echo "usage: round7.sh vae|train|graphs|multi|multi21|halo|unet" >&2; exit 2 ;;
esac
tar -C "$out" -czf /tmp/results.tgz . && mv /tmp/results.tgz "$out/results.tgz"
