"""Assembles each PTX module of `conv3d-run --emit=ptx` output (read from
stdin; modules start at a "// conv3d: gpu.module @name" marker) with the
given ptxas command line, and prints one line per module."""
import subprocess
import sys
import tempfile

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
    cmd = sys.argv[1:] + [fh.name, "-o", fh.name + ".cubin"]
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"ptxas_each.py: {name}: {result.stderr.strip()}")
    print(f"assembled {name}")
