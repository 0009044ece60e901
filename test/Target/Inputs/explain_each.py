"""Runs `conv3d-run --explain` on each line of a shapes file ("name flags..."),
with the extra flags given, printing "== name" before each explanation."""
import shlex
import subprocess
import sys

shapes, extra = sys.argv[1], sys.argv[2:]
with open(shapes) as f:
    for line in f:
        if not line.strip() or line.startswith("#"):
            continue
        name, flags = line.split(maxsplit=1)
        print("==", name, flush=True)
        result = subprocess.run(["conv3d-run", "--explain"] + extra + shlex.split(flags),
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        print(result.stdout, end="", flush=True)
