#!/bin/bash
# Issue 25 on one GPU (H100/H200), from the repository root after
# `source scripts/gpu/env.sh` (the build carried as .gpu-carry): logs under
# $OUT, about 4-5 minutes.
#  1. the WAN VAE CPU tests (test/Inputs/wan_vae_check.py: structure and
#     state dict, with safetensors if installed; CPU-target numerics;
#     gloo height split on 2 processes), with this machine's PyTorch;
#  2. Conv3dWanDecoder on the GPU against the eager twin on a small latent
#     (bf16, rel_l2 of both against the float32 eager decode);
#  3. bench/vae_decode.py, short: 480p and 720p latents of 3 frames (9 video
#     frames), eager bf16 vs ours, peak memory, errors, stages. The full
#     21-frame decode: VAE_FRAMES=21 (longer than the job's budget at 720p);
#  4. the 480p decode again with --fold-upsample (the upsamplings folded
#     into their convolutions: conv3d.upsample), if time is left.
set -uo pipefail
OUT="${OUT:-/tmp/vae-out}"
mkdir -p "$OUT"
status=0
# Every step's timeout is cut to what is left of 340 s: the job ends in < 6 min.
deadline=$(( $(date +%s) + 340 ))
left() { local l=$(( deadline - $(date +%s) )); [ "$l" -lt "$1" ] && echo $(( l > 1 ? l : 1 )) || echo "$1"; }
export PYTHONPATH="$PWD/python:${PYTHONPATH:-}"
nvidia-smi -L > "$OUT/gpu.txt" 2>&1
python3 -c "import torch; print('torch', torch.__version__)" | tee "$OUT/versions.txt"
for mode in structure numeric dist; do
  timeout "$(left 90)" python3 test/Inputs/wan_vae_check.py "$mode" > "$OUT/check-$mode.log" 2>&1 || status=1
  tail -3 "$OUT/check-$mode.log"
done
timeout "$(left 100)" python3 - > "$OUT/gpu-small.log" 2>&1 <<'PY' || status=1
import torch
from conv3d.models import wan_vae as W
torch.manual_seed(0)
m = W.WanVAEDecoder().cuda().eval()
with torch.no_grad():
    for n, p in m.named_parameters():
        if n.endswith("gamma"):
            p.copy_(1 + 0.1 * torch.randn_like(p))
    torch.nn.init.kaiming_uniform_(m.decoder.middle[1].proj.weight, a=5 ** 0.5)
z = torch.randn(1, 16, 3, 12, 16, device="cuda")
torch.backends.cudnn.allow_tf32 = False
torch.backends.cuda.matmul.allow_tf32 = False
ref = m.decode(z, clamp=False).float()
mb = m.bfloat16()
eager = mb.decode(z.bfloat16(), clamp=False).float()
ours = W.Conv3dWanDecoder(mb).decode(z.bfloat16(), clamp=False).float()
folded = W.Conv3dWanDecoder(mb, fold_upsample=True).decode(z.bfloat16(), clamp=False).float()
e = lambda y: ((y - ref).norm() / ref.norm()).item()
print("small decode %s: eager bf16 rel_l2 %.2e, conv3d bf16 rel_l2 %.2e, folded upsampling "
      "%.2e, finite %s" % (tuple(ours.shape), e(eager), e(ours), e(folded),
                           bool(torch.isfinite(ours).all() and torch.isfinite(folded).all())))
print("GPU-SMALL", "PASS" if max(e(ours), e(folded)) <= 2 * e(eager) + 1e-3 else "FAIL")
PY
cat "$OUT/gpu-small.log"
grep -q "GPU-SMALL PASS" "$OUT/gpu-small.log" || status=1
timeout "$(left 300)" python3 bench/vae_decode.py --sizes 480p,720p --frames "${VAE_FRAMES:-3}" \
  --repeat 2 --profile-frames 2 --json "$OUT/vae_decode.json" 2>&1 | tee "$OUT/bench.log" || status=1
# The upsamplings folded into their convolutions (conv3d.upsample): time and
# peak memory against the run above.
timeout "$(left 200)" python3 bench/vae_decode.py --sizes 480p --frames "${VAE_FRAMES:-3}" \
  --repeat 2 --profile-frames 2 --no-reference --fold-upsample --json "$OUT/vae_decode_folded.json" \
  2>&1 | tee "$OUT/bench-folded.log" || status=1
echo "vae job status $status" | tee "$OUT/status.txt"
exit $status
