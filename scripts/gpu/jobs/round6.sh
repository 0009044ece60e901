#!/usr/bin/env bash
# The measurements of 2026-11-28 (bench/RESULTS.md, "sixth session"), one
# device call per phase, run from the repository root with the build
# carried as .gpu-carry; logs and results.tgz under $OUT:
#   lit        the GPU unit tests, every GPU execution lit test
#              (test/GPU/*-run, python-cupy, host-overhead), then
#              trainstep.sh (about 9 minutes);
#   sweep      bench/networks.py's 300 random layers (seed 51, never used to
#              choose anything) and every network, then bench/grouped.py
#              with the compiler's picks and tuned (about 2-4 minutes);
#   mvit       mvit_v2_s with its depthwise convolutions counted
#              (bench/networks.py now measures grouped layers);
#   trainstep  bench/train_step.py, U-Net then the VAE block, with a
#              Python traceback (faulthandler) if a model runs out of time.
set -u
phase="${1:-}"
JOB_BUDGET_S=570 source "$(dirname "${BASH_SOURCE[0]}")/../job-setup.sh"
case "$phase" in
  lit)
    bash scripts/gpu/run.sh info > "$out/info.log" 2>&1
    timeout "$(left 150)" "$carry/unittests/Conv3dUnitTests" --gtest_brief=1 > "$out/unit.log" 2>&1 \
      || echo "unit rc=$?"
    LIT_FILTER='GPU/.*(-run|cupy|host-overhead)' OUT="$out" timeout "$(left 230)" \
      bash scripts/gpu/run.sh lit > "$out/lit-all.log" 2>&1 || echo "lit rc=$?"
    grep -E "^(FAIL|  Passed|  Failed|  Unsup)" "$out/lit.log" | tail -30
    elapsed lit
    OUT="$out" timeout "$(left 290)" bash scripts/gpu/jobs/trainstep.sh > "$out/trainstep-all.log" 2>&1 \
      || echo "trainstep rc=$?"
    elapsed trainstep ;;
  sweep)
    timeout "$(left 200)" python3 bench/networks.py --out "$out/sweep51" --random 300 --seed 51 \
      > "$out/sweep51.log" 2>&1 || echo "sweep rc=$?"
    tail -12 "$out/sweep51.log"
    timeout "$(left 150)" python3 bench/networks.py --out "$out/net" --wall-reps 3 > "$out/net.log" 2>&1 \
      || echo "net rc=$?"
    tail -25 "$out/net.log"
    timeout "$(left 130)" python3 bench/grouped.py --target sm90 --json "$out/grouped-tc.json" \
      > "$out/grouped-tc-bench.log" 2>&1 || echo "grouped rc=$?"
    timeout "$(left 80)" python3 bench/grouped.py --target sm90 --tune \
      --only grouped8_c256_8x28x28 grouped16_c256_8x28x28 resnext_32x16_c512_8x14x14 \
      --json "$out/grouped-tc-tuned.json" > "$out/grouped-tc-tuned.log" 2>&1 || echo "tuned rc=$?"
    tail -30 "$out/grouped-tc-bench.log" "$out/grouped-tc-tuned.log"
    elapsed sweep ;;
  mvit)
    timeout "$(left 110)" python3 bench/networks.py --networks mvit_v2_s --sizes 224 --wall-reps 3 \
      --out "$out/mvit" > "$out/mvit.log" 2>&1 || echo "mvit rc=$?"
    grep -E "^\| mvit|networks whose|FAIL" "$out/mvit.log" | head
    elapsed mvit ;;
  trainstep)
    train unet 230
    train vae_block 200 ;;
  *) echo "usage: round6.sh lit|sweep|mvit|trainstep" >&2; exit 2 ;;
esac
tar -C "$out" -czf /tmp/results.tgz . && mv /tmp/results.tgz "$out/results.tgz"
