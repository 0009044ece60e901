#!/bin/sh
# A stand-in for ptxas (conv3d-sweep --assemble's negative tests): what it
# does is chosen by $FAKE_PTXAS: warn (a warning, exit 0, a cubin), fail
# (an error, exit 1), silent (exit 0 without writing the cubin).
out=
while [ $# -gt 0 ]; do
  if [ "$1" = "-o" ]; then out="$2"; shift; fi
  shift
done
case "$FAKE_PTXAS" in
  warn) echo "ptxas warning : a warning of the fake ptxas" >&2; echo cubin > "$out" ;;
  fail) echo "ptxas fatal   : an error of the fake ptxas" >&2; exit 1 ;;
  silent) ;;
esac
exit 0
