"""Checks that the compiler's cost model (lib/Target/CostModel.cpp, as
`conv3d-run --list-configs --json` reports it: predicted_ms per
configuration) and its Python twin (bench/costmodel/model.py, which fits the
constants) agree on random sm90 layers, every configuration listed: the
default pick, the heuristic's and the tuner's candidates.

    python3 cost_model_twin.py <conv3d-run> <source root> [layers] [seed]
"""

import json
import os
import random
import re
import subprocess
import sys

tool, root = sys.argv[1], sys.argv[2]
layers = int(sys.argv[3]) if len(sys.argv) > 3 else 24
seed = int(sys.argv[4]) if len(sys.argv) > 4 else 1
sys.path.insert(0, os.path.join(root, "bench", "costmodel"))
sys.path.insert(0, os.path.join(root, "bench"))
import model  # noqa: E402
from netbench.configs import DEFAULTS, fields  # noqa: E402

constants = {}
with open(os.path.join(root, "lib", "Target", "CostModelConstants.inc")) as f:
    for name, value in re.findall(r"CONV3D_COST_CONSTANT\((\w+), ([^)]+)\)", f.read()):
        constants[name] = float(value)
missing = set(model.NAMES) - set(constants)
if missing:
    sys.exit("constants missing from CostModelConstants.inc: %s" % sorted(missing))

rng = random.Random(seed)
checked = 0
for index in range(layers):
    n = rng.choice([1, 2, 4])
    c = rng.choice([16, 32, 64, 96, 128, 256, 320, 512, 921])
    f_ = rng.choice([32, 64, 96, 128, 256, 512])
    q, r, s = rng.choice([(3, 3, 3), (1, 3, 3), (3, 1, 1), (1, 1, 1)])
    d = rng.choice([2, 4, 8, 16])
    h = w = rng.choice([7, 14, 28, 56])
    stride = rng.choice([1, 1, 2])
    pads = [q // 2, q // 2, r // 2, r // 2, s // 2, s // 2]
    cmd = [tool, "--list-configs", "--json", "--target=sm90", "--filter-layout=fqrsc",
           "--dtype=bf16", "--input-shape=%d,%d,%d,%d,%d" % (n, d, h, w, c),
           "--filter-shape=%d,%d,%d,%d,%d" % (q, r, s, c, f_),
           "--padding=" + ",".join(map(str, pads)),
           "--stride=%d,%d,%d" % (stride, stride, stride)]
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit("layer %d: %s failed:\n%s" % (index, " ".join(cmd), result.stderr))
    listing = json.loads(result.stdout)

    def out(size, k, pad):
        return (size + 2 * pad - k) // stride + 1
    do, ho, wo = out(d, q, q // 2), out(h, r, r // 2), out(w, s, s // 2)
    shape = dict(N=n, C=c, D=d, H=h, W=w, F=f_, Q=q, R=r, S=s, Do=do, Ho=ho, Wo=wo,
                 gemm_m=n * do * ho * wo, gemm_k=q * r * s * c)
    for text, ms in listing["predicted_ms"].items():
        config = dict(DEFAULTS, **fields(text))
        if config["kernel"] == "cpu":
            config["kernel"] = "sm90"
        twin = model.predict(shape, config, constants)
        if twin is None or abs(twin - ms) > 1e-6 * max(ms, 1e-3):
            sys.exit("layer %d (%s): %s: compiler %r ms, twin %r ms" %
                     (index, " ".join(cmd[2:]), text, ms, twin))
        checked += 1
    if not listing["predicted_ms"]:
        sys.exit("layer %d: no predictions listed" % index)
print("twin: %d configurations of %d layers agree" % (checked, layers))
