"""Checks of bench/networks.py's parts that need no GPU and no PyTorch:
the statistics, the layer geometry, the random-layer generator and its
split, and the WAN decoder's layer list. argv[1]: the bench folder."""

import math
import random
import sys

sys.path.insert(0, sys.argv[1])

from netbench import layers as L  # noqa: E402
from netbench import configs, models, random_layers as R, stats  # noqa: E402


def expect(condition, what):
    if not condition:
        raise SystemExit("FAIL: " + what)


def close(a, b):
    return abs(a - b) <= 1e-12 * max(1.0, abs(b))


# Statistics, against values computed by hand (and NumPy's percentile with
# its default linear method: np.percentile([1, 2, 3, 4], 5) = 1.15).
expect(close(stats.geomean([1, 4]), 2.0), "geomean([1, 4])")
expect(close(stats.geomean([2, 8, 4]), 4.0), "geomean([2, 8, 4])")
expect(close(stats.percentile([4, 1, 3, 2], 5), 1.15), "p5 of 1..4")
expect(close(stats.percentile([4, 1, 3, 2], 50), 2.5), "p50 of 1..4")
expect(close(stats.percentile([7], 5), 7), "p5 of one value")
expect(close(stats.percentile(list(range(101)), 5), 5), "p5 of 0..100")
expect(close(stats.percentile([10, 20], 100), 20), "p100")
for bad in ([], [1.0, 0.0], [-1.0]):
    try:
        stats.geomean(bad)
        expect(False, "geomean(%r) raised nothing" % bad)
    except ValueError:
        pass
s = stats.ratio_summary([0.5, 1.0, 2.0, 4.0])
expect(close(s["geomean"], math.sqrt(2)) and s["min"] == 0.5 and s["max"] == 4.0
       and close(s["p5"], 0.575) and s["count"] == 4, "ratio_summary %r" % s)
rows = [dict(layer="a", count=2, ours_ms=1.0, cudnn_ms=1.5),
        dict(layer="b", count=1, ours_ms=2.0, cudnn_ms=1.0),
        dict(layer="c", count=3, error="refused", cudnn_ms=0.3)]
n = stats.network_summary(rows)
expect(n["layers"] == 6 and n["distinct"] == 3 and n["untimed"] == 1, "counts %r" % n)
expect(close(n["ours_ms"], 4.0) and close(n["cudnn_ms"], 4.0) and close(n["ratio"], 1.0),
       "sums %r" % n)
expect(n["worst_layer"] == "b" and close(n["worst_ratio"], 0.5), "worst %r" % n)
print("statistics: OK")

# Geometry: PyTorch's output sizes for r3d_18's stem and a strided layer.
stem = L.ConvLayer(2, 3, 16, 112, 112, 64, (3, 7, 7), (1, 2, 2), (1, 3, 3))
expect(stem.output_shape() == (2, 64, 16, 56, 56), "stem output %r" % (stem.output_shape(),))
expect(stem.gemm() == (2 * 16 * 56 * 56, 64, 3 * 147), "stem GEMM %r" % (stem.gemm(),))
expect(stem.flops() == 2 * 2 * 16 * 56 * 56 * 64 * 441, "stem FLOPs")
down = L.ConvLayer(2, 256, 4, 14, 14, 512, (3, 3, 3), (2, 2, 2), (1, 1, 1))
expect(down.output_shape() == (2, 512, 2, 7, 7), "stride-2 output %r" % (down.output_shape(),))
expect(down.spec_args()["padding"] == (1, 1, 1, 1, 1, 1) and
       down.spec_args()["input_shape"] == (2, 4, 14, 14, 256), "spec args")
try:
    L.ConvLayer(1, 8, 2, 2, 2, 8, (3, 3, 3))
    expect(False, "a window larger than the input was accepted")
except ValueError as error:
    print("window check:", error)
# A grouped layer (MViT's pooling: depthwise; a 32 x 8 grouped one): the
# weight's per-group channels, the per-group GEMM's K, the spec's groups,
# and a CSV row round trip.
pool = L.ConvLayer(2, 96, 8, 56, 56, 96, (3, 3, 3), (1, 8, 8), (1, 1, 1), groups=96)
expect(pool.weight_shape() == (96, 1, 3, 3, 3), "depthwise weight %r" % (pool.weight_shape(),))
expect(pool.gemm()[2] == 27 and pool.family() == "depthwise/s188", "depthwise %r %s"
       % (pool.gemm(), pool.family()))
grouped = L.ConvLayer(2, 256, 8, 28, 28, 256, (3, 3, 3), (1, 1, 1), (1, 1, 1), groups=32)
expect(grouped.spec_args()["filter_shape"] == (3, 3, 3, 8, 256)
       and grouped.spec_args()["groups"] == 32 and "groups" not in down.spec_args(),
       "grouped spec args %r" % (grouped.spec_args(),))
expect(grouped.describe().endswith(" g32") and grouped.family() == "grouped",
       "grouped %s %s" % (grouped.describe(), grouped.family()))
expect(L.ConvLayer.from_dict({k: str(v) for k, v in grouped.as_dict().items()}) == grouped
       and L.ConvLayer.from_dict(dict(down.as_dict(), groups="")) == down, "from_dict")
for bad in (3, 0):
    try:
        L.ConvLayer(1, 8, 4, 4, 4, 8, (1, 1, 1), groups=bad)
        expect(False, "groups=%d accepted for C = F = 8" % bad)
    except ValueError as error:
        print("groups check:", error)
counted = L.count_layers([stem, down, stem, stem])
expect(counted == [(stem, 3), (down, 1)], "count_layers %r" % counted)
print("geometry: OK")

# The generator: deterministic per seed, distinct layers, every family, the
# traits the issue asks for, within the limits.
a = R.generate(300, 7)
expect(a == R.generate(300, 7), "the same seed draws the same layers")
expect(a != R.generate(300, 8), "another seed draws other layers")
expect(len(set(layer for layer, _ in a)) == 300, "distinct layers")
families = {name for _, name in a}
expect(families == set(R.FAMILIES), "families drawn: %s" % sorted(families))
ls = [layer for layer, _ in a]
expect(any(1 <= x.c <= 4 for x in ls), "stems on 1-4 channels")
expect(any(x.kernel == (3, 1, 1) for x in ls) and any(x.kernel == (1, 3, 3) for x in ls)
       and any(x.kernel == (1, 1, 1) for x in ls), "temporal, spatial and pointwise")
expect(any(x.kernel == (3, 3, 3) and x.stride == (1, 1, 1) for x in ls)
       and any(x.kernel == (3, 3, 3) and 2 in x.stride for x in ls), "3x3x3, strides 1 and 2")
expect(any(x.h in (7, 14) and x.w == x.h and x.d <= 4 for x in ls), "late 7x7 / 14x14")
expect(any(x.c % 8 or x.f % 8 for x in ls), "channel counts that are no multiple of 8")
expect(any(x.c == 921 or x.f == 921 for x in ls), "921 channels")
expect({x.n for x in ls} <= {1, 2, 4, 8} and {1, 8} <= {x.n for x in ls}, "batch 1-8")
expect(all(x.flops() <= R.MAX_GFLOP * 1e9 for x in ls), "GFLOP limit")
expect(all(2 * (math.prod(x.input_shape()) + math.prod(x.output_shape()))
           <= R.MAX_ACTIVATION_BYTES for x in ls), "activation limit")
small_m = sum(x.gemm()[0] < 1024 for x in ls)
expect(small_m >= 15, "layers of small M (%d)" % small_m)
print("generator: %d layers, %d families, %d of M < 1024, %d with C or F no multiple of 8: OK"
      % (len(ls), len(families), small_m, sum(bool(x.c % 8 or x.f % 8) for x in ls)))

# Split: disjoint, complete, deterministic, the fraction asked.
fit, validation = R.split(a, 0.6, 7)
expect(len(fit) == 180 and len(validation) == 120, "split sizes")
expect(not set(fit) & set(validation) and set(fit) | set(validation) == set(a), "partition")
expect((fit, validation) == R.split(a, 0.6, 7), "split is deterministic")
expect(R.split(a, 0.6, 8)[0] != fit, "another seed splits otherwise")
for bad in (0, 1, 1.5):
    try:
        R.split(a, bad, 1)
        expect(False, "fraction %r accepted" % bad)
    except ValueError:
        pass
# One layer drawn under tight limits is shrunk to fit them.
layer, _ = R.draw(random.Random(3), max_gflop=0.5, max_bytes=1 << 20)
expect(layer.flops() <= 0.5e9, "shrunk under the limits: %s" % layer.describe())
print("split: 180 fit, 120 validation, disjoint: OK")

# Configuration texts: fields, short names, the cost model's features.
text = "tile_m=128,tile_n=256,tile_k=64,stages=3,warps_m=8,k_order=qslice_outer,kernel=sm90"
expect(configs.fields(text) == dict(tile_m=128, tile_n=256, tile_k=64, stages=3, warps_m=8,
                                     k_order="qslice_outer", kernel="sm90"), "fields")
expect(configs.fields("") == {}, "no fields")
expect(configs.short_name(text, "sm90") == "sm90 128x256", configs.short_name(text, "sm90"))
expect(configs.short_name("tile_m=256,tile_n=64,tile_k=64,kernel=sm90,mainloop=halo;"
                          "tile_m=64,tile_n=64,tile_k=32,split_k=3,schedule=pingpong",
                          "sm80") == "sm90 halo 256x64; sm80 64x64 pingpong split3",
       "short names of two configurations")
late = L.ConvLayer(2, 512, 2, 7, 7, 512, (3, 3, 3), padding=(1, 1, 1))  # M = 196
f = configs.features(late, text, "sm90", 132)
expect(f["cfg_tile_m"] == 128 and f["cfg_split_k"] == 1 and f["cfg_schedule"] == "cooperative"
       and f["cfg_mainloop"] == "im2col" and f["cfg_kernel"] == "sm90", "fields %r" % f)
expect((f["tiles_m"], f["tiles_n"], f["ctas"], f["k_steps"]) == (2, 2, 4, 27 * 8),
       "tiling %r" % f)
expect(close(f["waves"], 4 / 132) and close(f["last_wave_fill"], 4 / 132)
       and close(f["tile_eff_m"], 196 / 256) and close(f["tile_eff_n"], 1.0), "waves %r" % f)
f = configs.features(late, "tile_m=64,tile_n=64,tile_k=64,split_k=4", "sm80", 132)
expect(f["cfg_kernel"] == "sm80" and f["ctas"] == 4 * 8 * 4 and f["tiles_m"] == 4,
       "split-K CTAs %r" % f)
print("configurations: OK")

# WAN 2.1's decoder, one chunk of one latent frame at 60x104.
wan = models.wan_decoder_layers()
counted = dict(L.count_layers(wan))
expect(len(wan) == 36, "WAN conv calls: %d" % len(wan))
expect(counted[L.ConvLayer(1, 384, 3, 60, 104, 384, (3, 3, 3), padding=(0, 1, 1),
                           bias=True)] == 10, "384-channel causal convs at 60x104")
expect(counted[L.ConvLayer(1, 384, 4, 120, 208, 768, (3, 1, 1), bias=True)] == 1,
       "time convolution of the second stage (2 frames + 2 cached)")
expect(counted[L.ConvLayer(1, 192, 2, 120, 208, 384, (1, 1, 1), bias=True)] == 1,
       "the 1x1x1 shortcut 192 -> 384")
expect(counted[L.ConvLayer(1, 96, 6, 480, 832, 3, (3, 3, 3), padding=(0, 1, 1),
                           bias=True)] == 1, "the RGB head at 480x832, 4 frames + 2 cached")
print("WAN decoder: %d conv calls, %d distinct: OK" % (len(wan), len(counted)))
print("BENCH-NETWORKS-OK")
