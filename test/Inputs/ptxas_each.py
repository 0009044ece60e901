"""Assembles each PTX module of `conv3d-run --emit=ptx` output (read from
stdin; modules start at a "// conv3d: gpu.module @name" marker) with the
given ptxas command line, and prints one line per module.

Options before the ptxas command:
  --fail-on=TEXT  fail when a line of ptxas's diagnostics (its stderr, e.g.
                  "ptxas info    : (C7510) Potential Performance Loss:
                  wgmma.mma_async instructions are serialized ..." or a
                  warning) contains TEXT; repeatable. ptxas exits 0 on those
                  lines, so without this option they pass unnoticed.
"""
import subprocess
import sys
import tempfile

args = sys.argv[1:]
fail_on = []
while args and args[0].startswith("--fail-on="):
    fail_on.append(args.pop(0)[len("--fail-on="):])
if not args:
    sys.exit("ptxas_each.py: no ptxas command line")

text = sys.stdin.read()
modules = []
for chunk in text.split("// conv3d: gpu.module @")[1:]:
    name, _, body = chunk.partition("\n")
    modules.append((name.strip(), body))
if not modules:
    sys.exit("ptxas_each.py: no PTX module in the input")
for name, body in modules:
    with tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False) as fh:
        fh.write(body)
    cmd = args + [fh.name, "-o", fh.name + ".cubin"]
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"ptxas_each.py: {name}: {result.stderr.strip()}")
    for line in result.stderr.splitlines():
        if any(needle in line for needle in fail_on):
            sys.exit(f"ptxas_each.py: {name}: {line.strip()}")
    print(f"assembled {name}")
