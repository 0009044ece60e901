"""Tile configurations as the engine spells them (key=value texts,
conv3d-run --list-configs, Engine.compile(config=...)): their fields, a
short name for the tables, and the features a cost model is fitted on.
Plain Python (tested without a GPU or PyTorch)."""

import math

# The configuration attribute's defaulted parameters (Conv3dAttrs.td:
# IGemmConfigAttr); kernel = cpu means the target's own kernel.
DEFAULTS = dict(stages=1, warps_m=1, warps_n=1, k_order="taps_outer", split_k=1,
                kernel="cpu", schedule="cooperative", cluster_m=1, mainloop="im2col")


def fields(text):
    """{key: value} of one configuration's key=value text ("" -> {});
    integers as ints."""
    result = {}
    for item in filter(None, (text or "").split(",")):
        key, _, value = item.partition("=")
        result[key] = int(value) if value.lstrip("-").isdigit() else value
    return result


def short_name(text, target):
    """"sm90 halo 256x64", "sm90 128x128 pingpong", "sm80 64x128 split2"
    from a configuration text ("" or None: ""); several configurations (a
    convolution split in Q slices) are separated by ";"."""
    if not text:
        return ""
    parts = []
    for config in text.split(";"):
        f = fields(config)
        kernel = f.get("kernel", "cpu")
        words = [target if kernel == "cpu" else kernel]
        if f.get("mainloop", "im2col") != "im2col":
            words.append(str(f["mainloop"]))
        words.append("%sx%s" % (f.get("tile_m", "?"), f.get("tile_n", "?")))
        if f.get("schedule", "cooperative") != "cooperative":
            words.append(str(f["schedule"]))
        for key, label in (("split_k", "split"), ("cluster_m", "cluster")):
            if f.get(key, 1) != 1:
                words.append("%s%s" % (label, f[key]))
        parts.append(" ".join(words))
    return "; ".join(parts)


def features(layer, text, target, sms):
    """The configuration's fields (cfg_*, defaults filled in, the first of
    several) and the tiling they give the layer on a GPU of `sms`
    multiprocessors: M and N tiles, CTAs (times split_k), waves, the last
    wave's fill, the tiles' useful fraction and the K steps."""
    f = dict(DEFAULTS, **fields(text.split(";")[0]))
    if f["kernel"] == "cpu":
        f["kernel"] = target
    row = {"cfg_" + key: value for key, value in f.items()}
    m, n, _ = layer.gemm()
    tm, tn, tk = f.get("tile_m"), f.get("tile_n"), f.get("tile_k")
    if tm and tn and tk:
        tiles_m, tiles_n = math.ceil(m / tm), math.ceil(n / tn)
        ctas = tiles_m * tiles_n * f["split_k"]
        row.update(tiles_m=tiles_m, tiles_n=tiles_n, ctas=ctas, waves=ctas / sms,
                   last_wave_fill=(ctas % sms or sms) / sms,
                   tile_eff_m=m / (tiles_m * tm), tile_eff_n=n / (tiles_n * tn),
                   k_steps=math.prod(layer.kernel) * math.ceil(layer.c / tk))
    return row
