"""Writes a candidates.csv for bench/costmodel/replay.py's test: two layers
as `bench/networks.py --candidates` would have timed them, the compiler's
pick (asked of conv3d-run --list-configs, so the fixture follows the rules
as they change) and one other configuration each. On the first layer the
other one is twice as fast (a miss: best / pick 0.5), on the second the
pick is the fastest; cuDNN takes 1.5 ms on both, and a third configuration
of the first layer failed (left out). With STUB, it also writes there an
executable stand-in for another build's conv3d-run whose --list-configs
picks the other configuration on every layer (replay.py --baseline).

    costmodel_replay_fixture.py BENCH_DIR CONV3D_RUN OUT.csv [STUB]
"""

import csv
import json
import os
import sys

sys.path.insert(0, sys.argv[1])
from netbench import compiling  # noqa: E402
from netbench.layers import ConvLayer  # noqa: E402

tool, path = sys.argv[2], sys.argv[3]
layers = [ConvLayer(2, 128, 8, 32, 32, 128, (3, 3, 3), padding=(1, 1, 1)),
          ConvLayer(1, 64, 4, 16, 16, 96, (1, 1, 1))]
other = "tile_m=64,tile_n=64,tile_k=64,stages=4,warps_m=4,kernel=sm90"
fields = (["index", "set", "layer"] + list(layers[0].as_dict()) +
          ["config", "is_heuristic", "ms", "cudnn_ms", "error"])
with open(path, "w", newline="") as out:
    writer = csv.DictWriter(out, fieldnames=fields)
    writer.writeheader()
    for index, layer in enumerate(layers):
        pick = compiling.list_configs(layer, "sm90", tool)["heuristic"]
        base = dict(layer.as_dict(), index=index, set="all", layer="layer%d" % index,
                    cudnn_ms=1.5, error="")
        # The pick as networks.py writes it: the same fields, in another order.
        reordered = ",".join(reversed(pick.split(",")))
        writer.writerow(dict(base, config=reordered, is_heuristic=1,
                             ms=2.0 if index == 0 else 1.0))
        writer.writerow(dict(base, config=other, is_heuristic=0,
                             ms=1.0 if index == 0 else 3.0))
        if index == 0:
            writer.writerow(dict(base, config="tile_m=999", is_heuristic=0, ms="",
                                 error="refused by the compiler"))
if len(sys.argv) > 4:
    with open(sys.argv[4], "w") as stub:
        stub.write("#!%s\nimport json\nprint(json.dumps(%s))\n" % (
            sys.executable, json.dumps({"heuristic": other, "candidates": []})))
    os.chmod(sys.argv[4], 0o755)
print("fixture: %d layers" % len(layers))
