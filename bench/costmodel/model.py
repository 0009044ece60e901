"""The kernel cost model's formula, the Python twin of lib/Target/CostModel.cpp
(which is what the compiler runs; this copy exists to fit the constants).
Keep the two in step: test/Target/cost-model-twin.test compares them.

Times in milliseconds. A configuration's time is the larger of its kernel
time and the DRAM floor, plus the cost of its split-K reduction:

  kernel = launch + rounds * (fill + steps_per_block * step + epilogue)
  step   = max(MMA time of a K step, its L2 loads at the bandwidth the
           active blocks share) + per-step overhead
  rounds = ceil(blocks / (multiprocessors * blocks per multiprocessor))

sm90 (wgmma): a K step is one tap x 64 channels; the halo mainloop loads a
patch per depth tap and reuses it across the R x S taps. sm80 (mma.sync):
K steps of tile_k, two blocks per multiprocessor when they fit, element-wise
loads for channel counts that are not multiples of 8 (odd ones slowest).
Split-K adds a cluster handshake (up to 4 splits, reduced in the kernel) or
the workspace's extra kernel and bytes (more splits).
"""

import math

#: The constants, in the order of lib/Target/CostModelConstants.inc.
NAMES = ["launch", "bw_dram", "bw_l2",
         "a90", "s90", "fill90", "epi90", "pingpong_epi", "halo_reload",
         "a80", "s80", "fill80", "epi80", "odd80", "vec80",
         "cluster_split", "workspace_launch", "workspace_bw"]

#: Starting values for a fit (physically plausible magnitudes).
INITIAL = dict(launch=3e-3, bw_dram=3e3, bw_l2=8e3,
               a90=1.2e-7 * 64, s90=2e-4, fill90=1.5e-3, epi90=3e-7, pingpong_epi=0.6,
               halo_reload=1.5,
               a80=3e-7 * 64, s80=2e-4, fill80=1e-3, epi80=3e-7, odd80=3.0, vec80=2.0,
               cluster_split=1e-3, workspace_launch=4e-3, workspace_bw=3e3)

MULTIPROCESSORS = 132
#: More splits than this go through the workspace (SM90KernelPlan.h).
MAX_SPLIT_CLUSTER = 4


def reduces_in_cluster(split, config):
    """SM90KernelPlan::splitClusterProblem: the sm90 kernel reduces 2 to
    MAX_SPLIT_CLUSTER splits in a cluster, with the cooperative schedule,
    cluster_m = 1 and the im2col mainloop."""
    return (2 <= split <= MAX_SPLIT_CLUSTER and config["schedule"] == "cooperative"
            and config.get("cluster_m", 1) == 1 and config["mainloop"] == "im2col")
#: wgmma accumulators per thread the model prices (CostModel.cpp says why).
MAX_ACCUMULATORS = 160


def ceil_div(a, b):
    return -(-a // b)


def predict(shape, config, p, sms=MULTIPROCESSORS):
    """Predicted milliseconds of `config` (a dict of the configuration's
    fields, defaults filled in, `kernel` resolved) on `shape` (a dict: N, C,
    D, H, W, F, Q, R, S, Do, Ho, Wo, gemm_m, gemm_k), or None where the model
    says the kernel serializes (too many accumulators)."""
    m, f, c = shape["gemm_m"], shape["F"], shape["C"]
    taps = shape["Q"] * shape["R"] * shape["S"]
    tm, tn, tk = config["tile_m"], config["tile_n"], config["tile_k"]
    split = config["split_k"]
    kernel, mainloop = config["kernel"], config["mainloop"]
    pingpong = config["schedule"] == "pingpong"
    if kernel not in ("sm90", "sm100", "sm80"):
        return None
    wgmma = kernel in ("sm90", "sm100")
    if wgmma and kernel == "sm90":
        groups = 1 if pingpong else max(1, config["warps_m"] // 4)
        if (tm // (64 * groups)) * tn // 2 > MAX_ACCUMULATORS:
            return None
    n_tiles = ceil_div(f, tn)
    if mainloop == "halo":
        tiles = (shape["N"] * shape["Do"] * ceil_div(shape["Ho"], tm // 64) *
                 ceil_div(shape["Wo"], 64) * n_tiles)
    elif config["k_order"] == "qslice_outer":
        tiles = shape["N"] * shape["Do"] * ceil_div(shape["Ho"] * shape["Wo"], tm) * n_tiles
    elif kernel == "sm90" and shape.get("tma_depth_slices"):
        # Per-depth-slice TMA loads (ConvGeometry::tmaRowTiles); the fit's
        # shapes do not say so (the key is absent: over all of M).
        cluster = config.get("cluster_m", 1)
        tiles = (shape["N"] * shape["Do"] * ceil_div(ceil_div(shape["Ho"] * shape["Wo"], tm),
                                                     cluster) * cluster * n_tiles)
    else:
        tiles = ceil_div(m, tm) * n_tiles
    blocks = tiles * split
    if wgmma:
        active, rounds = min(blocks, sms), ceil_div(blocks, sms)
        steps = ceil_div(taps * ceil_div(c, 64), split)
        if mainloop == "halo":
            patch = (tm // 64 + shape["R"] - 1) * ceil_div(64 + shape["S"] - 1, 8) * 8 * 128
            a_bytes = p["halo_reload"] * patch / (shape["R"] * shape["S"])
        else:
            a_bytes = tm * 128
        l2 = active * (a_bytes + tn * 128) / (p["bw_l2"] * 1e6)
        mma = p["a90"] * tm * tn / 4096
        step = max(mma, l2) + p["s90"]
        epilogue = p["epi90"] * tm * tn * (p["pingpong_epi"] if pingpong else 1.0)
        tile = p["fill90"] + steps * step + epilogue
    else:
        per_sm = 2 if config["stages"] * (tm + tn) * tk * 2 <= 100e3 else 1
        active, rounds = min(blocks, sms * per_sm), ceil_div(blocks, sms * per_sm)
        steps = ceil_div(ceil_div(shape["gemm_k"], tk), split)
        l2 = active * (tm + tn) * tk * 2 / (p["bw_l2"] * 1e6)
        mma = p["a80"] * tm * tn * tk / 262144 * per_sm
        slow = p["odd80"] if c % 2 else (p["vec80"] * tk / 32 if c % 8 else 1.0)
        step = (max(mma, l2) + p["s80"]) * slow
        tile = p["fill80"] + steps * step + p["epi80"] * tm * tn
    kernel_ms = p["launch"] + rounds * tile
    dram = (shape["N"] * shape["D"] * shape["H"] * shape["W"] * c + taps * c * f + m * f) * 2
    total = max(kernel_ms, dram / (p["bw_dram"] * 1e6))
    if split > 1:
        if kernel == "sm90" and reduces_in_cluster(split, config):
            total += p["cluster_split"] * split
        else:
            total += p["workspace_launch"] + 2 * split * m * f * 4 / (p["workspace_bw"] * 1e6)
    return total
