#!/bin/bash
# Issue 25 on 2 and 4 GPUs of one host (nvidia-h100-x4), from the repository
# root after `source scripts/gpu/env.sh`: logs under $OUT, about 5 minutes.
# bench/vae_decode.py under torchrun (one process per GPU, NCCL), the
# height split of Conv3dWanDecoder: a 720p latent of 3 frames (VAE_SIZES=720p,480p
# and VAE_FRAMES=21 for more, past the 6-minute budget), time,
# peak memory per GPU, rel_l2 against our one-GPU decode on rank 0, rank 0's
# stages; before them, the one-GPU baseline of the same sizes in the same job (for
# the speedup); VAE_FOLD=1 folds the upsamplings into their convolutions
# (--fold-upsample); VAE_GRAPHS=1 replays each decode step as a CUDA graph
# (--cuda-graphs). NVLink multicast stays off (never cuMulticastCreate).
set -uo pipefail
OUT="${OUT:-/tmp/vae-multi-out}"
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONPATH="$PWD/python:${PYTHONPATH:-}"
status=0
# Every step's timeout is cut to what is left of 340 s: the job ends in < 6 min.
deadline=$(( $(date +%s) + 340 ))
left() { local l=$(( deadline - $(date +%s) )); [ "$l" -lt "$1" ] && echo $(( l > 1 ? l : 1 )) || echo "$1"; }
gpus=$(nvidia-smi -L | wc -l)
nvidia-smi -L > "$OUT/gpu.txt" 2>&1
frames="${VAE_FRAMES:-3}"
timeout "$(left 100)" python3 bench/vae_decode.py --sizes "${VAE_SIZES:-720p}" --frames "$frames" --repeat 2 \
  --profile-frames 2 --no-reference --no-eager --top-kernels 0 ${VAE_FOLD:+--fold-upsample} ${VAE_GRAPHS:+--cuda-graphs} \
  --json "$OUT/one-gpu.json" 2>&1 | tee "$OUT/one-gpu.log" \
  || status=1
for n in 2 4; do
  [ "$n" -le "$gpus" ] || { echo "skipped $n GPUs: $gpus present" | tee "$OUT/torchrun-$n.log"; continue; }
  timeout "$(left 120)" python3 -m torch.distributed.run --standalone --nproc_per_node "$n" \
    bench/vae_decode.py --sizes "${VAE_SIZES:-720p}" --frames "$frames" --repeat 2 --profile-frames 2 \
    ${VAE_FOLD:+--fold-upsample} ${VAE_GRAPHS:+--cuda-graphs} --json "$OUT/torchrun-$n.json" 2>&1 | tee "$OUT/torchrun-$n.log" || status=1
  grep -q "split vs one GPU: FAIL" "$OUT/torchrun-$n.log" && status=1
done
echo "vae-multi job status $status" | tee "$OUT/status.txt"
exit $status
