#!/usr/bin/env bash
# Runs the libFuzzer targets of the sanitizer build (scripts/sanitize.sh
# builds them): conv3d-parser-fuzzer (arbitrary text as a module: parse,
# verify, print and parse back) and conv3d-pass-fuzzer (mutated modules
# through every conv3d pipeline and pass, verified after each pass).
# Seeds: every module of the lit tests (tools/conv3d-fuzzers/make_corpus.py).
#
#   scripts/fuzz.sh [SECONDS]   # each fuzzer for SECONDS (default 60)
#
# Environment:
#   FUZZ_SEED=N      libFuzzer's -seed (default 1: the same mutations each run)
#   FUZZ_FRESH=1     start from the seeds alone (CI); otherwise the corpus
#                    each fuzzer grew in earlier runs is kept and extended
#   FUZZ_JOBS=N      parallel fuzzing processes per fuzzer (default 1)
#   FUZZ_ONLY=NAME   one fuzzer (parser or pass)
#   CONV3D_SANITIZE_BUILD_DIR (default build-sanitize)
# A crash, sanitizer report, leak, timeout (30 s per input) or broken
# invariant stops the fuzzer; the input is saved under
# $CONV3D_SANITIZE_BUILD_DIR/fuzz/crashes/ and the exit status is 1.
# Reproduce with: build-sanitize/bin/conv3d-pass-fuzzer CRASH_FILE
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${CONV3D_SANITIZE_BUILD_DIR:-$root/build-sanitize}"
seconds="${1:-60}"
seed="${FUZZ_SEED:-1}"
jobs="${FUZZ_JOBS:-1}"
llvm=/usr/lib/llvm-22

log() { printf '[fuzz] %s\n' "$*"; }

export ASAN_OPTIONS="${ASAN_OPTIONS:-allow_user_poisoning=0:detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$root/scripts/sanitizers/lsan.supp:print_suppressions=0}"
export ASAN_SYMBOLIZER_PATH="${ASAN_SYMBOLIZER_PATH:-$llvm/bin/llvm-symbolizer}"

for name in parser pass; do
  [[ -n "${FUZZ_ONLY:-}" && "$FUZZ_ONLY" != "$name" ]] && continue
  fuzzer="$build/bin/conv3d-$name-fuzzer"
  if [[ ! -x "$fuzzer" ]]; then
    echo "fuzz.sh: $fuzzer not built: run scripts/sanitize.sh build" >&2
    exit 2
  fi
  work="$build/fuzz/$name"
  [[ "${FUZZ_FRESH:-0}" == 1 ]] && rm -rf "$work/corpus"
  mkdir -p "$work/corpus" "$work/seeds" "$build/fuzz/crashes"
  python3 "$root/tools/conv3d-fuzzers/make_corpus.py" "$root/test" "$work/seeds" >/dev/null
  log "conv3d-$name-fuzzer: $seconds s, seed $seed, $(ls "$work/seeds" | wc -l) seeds, $(ls "$work/corpus" | wc -l) corpus inputs"
  # New inputs go to the first directory (the corpus); seeds are read only.
  parallel=()
  ((jobs > 1)) && parallel=(-jobs="$jobs" -workers="$jobs")
  status=0
  "$fuzzer" "$work/corpus" "$work/seeds" "${parallel[@]}" \
    -seed="$seed" -max_total_time="$seconds" -timeout=30 -rss_limit_mb=4096 \
    -dict="$root/tools/conv3d-fuzzers/conv3d.dict" \
    -print_final_stats=1 \
    -artifact_prefix="$build/fuzz/crashes/$name-" \
    >"$work/log.txt" 2>&1 || status=$?
  grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb|^#[0-9]+ *DONE' "$work/log.txt" || true
  if [[ $status -ne 0 ]]; then
    tail -n 60 "$work/log.txt"
    log "conv3d-$name-fuzzer failed (status $status); inputs in $build/fuzz/crashes/"
    exit 1
  fi
done
log "no crash"
