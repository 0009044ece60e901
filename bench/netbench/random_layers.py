"""Random convolution layers drawn from the families real video and volume
networks use (issue 21): stems on 1-4 channels, temporal 3x1x1, spatial
1x3x3, 3x3x3 with strides 1 and 2 (and causal, with the cached frames in
the input), pointwise 1x1x1 (with strided shortcuts), and the late,
low-resolution layers (7x7, 14x14, 4x4, 6x6 on a few frames) where M is
small and K large. Channel counts include non-multiples of 8 and 16 (3,
45, 114, 230, 460, 921) and 24, 40; batch 1-8.

The draw is a pure function of the seed (random.Random), so a set can be
named by its seed and size and redrawn anywhere; `split` makes disjoint
fit and validation sets for the cost model.
"""

import random

from .layers import ConvLayer

EARLY = dict(channels=(16, 24, 32, 40, 45, 48, 64, 96, 128), sizes=(56, 60, 64, 80, 96, 112),
             depths=(8, 16, 32))
MID = dict(channels=(64, 96, 114, 128, 144, 160, 192, 230, 256, 288, 320, 384),
           sizes=(14, 16, 28, 30, 32, 56, 60), depths=(4, 8, 16))
LATE = dict(channels=(256, 288, 320, 384, 460, 512, 576, 640, 768, 921, 1024, 1152),
            sizes=(4, 6, 7, 8, 14), depths=(1, 2, 3, 4))
STAGES = (EARLY, MID, LATE)
BATCHES = (1, 1, 2, 2, 2, 4, 8)
# Aspect ratios W/H: square volumes and crops, and video frames (16:9, 480x832).
ASPECTS = (1.0, 1.0, 1.0, 4 / 3, 16 / 9, 1.733)

# Limits that keep one layer's timing short and its tensors well inside
# the GPU's memory: shapes beyond them are shrunk (batch, then depth, then
# height and width halved).
MAX_GFLOP = 1500.0
MAX_ACTIVATION_BYTES = 1 << 30


def _pick_stage(rng, weights=(0.35, 0.4, 0.25)):
    return rng.choices(STAGES, weights)[0]


def _spatial(rng, stage):
    h = rng.choice(stage["sizes"])
    w = max(1, round(h * rng.choice(ASPECTS)))
    return rng.choice(stage["depths"]), h, w


def _channels(rng, stage):
    c = rng.choice(stage["channels"])
    # Half the layers keep the width, as most blocks of these networks do.
    f = c if rng.random() < 0.5 else rng.choice(stage["channels"])
    if rng.random() < 0.04:
        f = 3  # an output head (RGB, a few classes)
    return c, f


def _stem(rng):
    c = rng.randint(1, 4)
    f = rng.choice((16, 24, 32, 45, 64, 96))
    kernel, stride, padding = rng.choice((
        ((3, 7, 7), (1, 2, 2), (1, 3, 3)),   # r3d_18, mc3_18
        ((1, 7, 7), (1, 2, 2), (0, 3, 3)),   # r2plus1d_18's spatial stem
        ((3, 7, 7), (2, 4, 4), (1, 3, 3)),   # mvit_v2_s
        ((2, 4, 4), (2, 4, 4), (0, 0, 0)),   # swin3d_t's patch embedding
        ((3, 3, 3), (1, 1, 1), (1, 1, 1)),   # U-Net stem, WAN's latent conv
    ))
    if kernel == (3, 3, 3) and rng.random() < 0.5:
        d = h = w = rng.choice((32, 48, 64, 96, 128))  # a medical volume patch
    else:
        h = rng.choice((112, 128, 160, 224))
        d, w = rng.choice((8, 16, 32)), round(h * rng.choice(ASPECTS))
    return dict(c=c, f=f, d=d, h=h, w=w, kernel=kernel, stride=stride, padding=padding)


def _temporal(rng):
    stage = _pick_stage(rng)
    d, h, w = _spatial(rng, stage)
    c, f = _channels(rng, stage)
    stride, padding = rng.choice((((1, 1, 1), (1, 0, 0)), ((2, 1, 1), (1, 0, 0)),
                                  ((1, 1, 1), (0, 0, 0))))
    if padding == (0, 0, 0):
        d += 2  # causal: two cached frames in front
    return dict(c=c, f=f, d=d, h=h, w=w, kernel=(3, 1, 1), stride=stride, padding=padding)


def _spatial_only(rng):
    stage = _pick_stage(rng)
    d, h, w = _spatial(rng, stage)
    c, f = _channels(rng, stage)
    stride = rng.choice(((1, 1, 1), (1, 1, 1), (1, 2, 2)))
    return dict(c=c, f=f, d=d, h=h, w=w, kernel=(1, 3, 3), stride=stride, padding=(0, 1, 1))


def _cube(rng):
    stage = _pick_stage(rng)
    d, h, w = _spatial(rng, stage)
    c, f = _channels(rng, stage)
    stride, padding = rng.choice((((1, 1, 1), (1, 1, 1)), ((1, 1, 1), (1, 1, 1)),
                                  ((2, 2, 2), (1, 1, 1)), ((1, 2, 2), (1, 1, 1)),
                                  ((1, 1, 1), (0, 1, 1))))
    if padding[0] == 0:
        d += 2  # causal (WAN): two cached frames in front
    return dict(c=c, f=f, d=d, h=h, w=w, kernel=(3, 3, 3), stride=stride, padding=padding)


def _pointwise(rng):
    stage = _pick_stage(rng)
    d, h, w = _spatial(rng, stage)
    c, f = _channels(rng, stage)
    stride = rng.choice(((1, 1, 1), (1, 1, 1), (2, 2, 2), (1, 2, 2)))
    return dict(c=c, f=f, d=d, h=h, w=w, kernel=(1, 1, 1), stride=stride, padding=(0, 0, 0))


def _late(rng):
    c, f = _channels(rng, LATE)
    h = rng.choice((4, 6, 7, 7, 14, 14))
    w = h
    d = rng.choice((1, 2, 2, 4, 4, 8, 16))
    kernel, padding = rng.choice((((3, 3, 3), (1, 1, 1)), ((3, 1, 1), (1, 0, 0)),
                                  ((1, 3, 3), (0, 1, 1)), ((1, 1, 1), (0, 0, 0))))
    stride = (2, 2, 2) if rng.random() < 0.2 and h > 4 else (1, 1, 1)
    return dict(c=c, f=f, d=d, h=h, w=w, kernel=kernel, stride=stride, padding=padding)


FAMILIES = {"stem": (_stem, 0.10), "temporal": (_temporal, 0.15),
            "spatial": (_spatial_only, 0.15), "3x3x3": (_cube, 0.30),
            "pointwise": (_pointwise, 0.12), "late": (_late, 0.18)}


def _fits(layer, max_gflop, max_bytes):
    from math import prod
    activations = 2 * (prod(layer.input_shape()) + prod(layer.output_shape()))
    return layer.flops() <= max_gflop * 1e9 and activations <= max_bytes


def _shrink(fields):
    """One step smaller: halve the batch, else the depth (keeping the
    window), else height and width."""
    q, r, s = fields["kernel"]
    if fields["n"] > 1:
        fields["n"] //= 2
    elif fields["d"] // 2 >= max(q, 1) + (2 if fields["padding"][0] == 0 and q > 1 else 0):
        fields["d"] //= 2
    else:
        fields["h"] = max(r, fields["h"] // 2)
        fields["w"] = max(s, fields["w"] // 2)


def draw(rng, max_gflop=MAX_GFLOP, max_bytes=MAX_ACTIVATION_BYTES):
    """One random layer and its family name."""
    names = list(FAMILIES)
    name = rng.choices(names, [FAMILIES[k][1] for k in names])[0]
    fields = FAMILIES[name][0](rng)
    fields["n"] = rng.choice(BATCHES)
    for _ in range(64):
        layer = ConvLayer(**fields)
        if _fits(layer, max_gflop, max_bytes):
            return layer, name
        _shrink(fields)
    raise AssertionError("could not shrink %r under the limits" % (fields,))


def generate(count, seed, max_gflop=MAX_GFLOP, max_bytes=MAX_ACTIVATION_BYTES):
    """`count` distinct random layers (with their family names) from `seed`."""
    rng = random.Random(seed)
    layers, seen = [], set()
    for _ in range(100 * count + 100):
        if len(layers) == count:
            break
        layer, name = draw(rng, max_gflop, max_bytes)
        if layer not in seen:
            seen.add(layer)
            layers.append((layer, name))
    if len(layers) < count:
        raise ValueError("drew only %d distinct layers of %d" % (len(layers), count))
    return layers


def split(items, fit_fraction, seed):
    """Disjoint (fit, validation) lists: a seeded shuffle of `items`, the
    first round(fit_fraction * len) for fitting."""
    if not 0 < fit_fraction < 1:
        raise ValueError("the fit fraction must be in (0, 1), got %r" % (fit_fraction,))
    order = list(range(len(items)))
    random.Random(seed * 1000003 + 17).shuffle(order)
    cut = round(fit_fraction * len(items))
    fit = sorted(order[:cut])
    validation = sorted(order[cut:])
    return [items[i] for i in fit], [items[i] for i in validation]
