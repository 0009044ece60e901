#!/usr/bin/env python3
"""Convolution kernel time of real networks and random layers, ours
against cuDNN (issue 21).

Three modes, all on the GPU machine (scripts/gpu/run.sh networks [flags]):

- Networks (default): torchvision's r3d_18, mc3_18, r2plus1d_18, s3d,
  swin3d_t and mvit_v2_s (their dense Conv3d layers), a 3-D U-Net in
  nnU-Net's 3d_fullres configuration and WAN 2.1's VAE decoder (one causal
  decode chunk). Each network's conv layers are read by forward hooks with
  the inputs they are called on, identical layers counted; every distinct
  layer (across all networks) is timed once: cuDNN (F.conv3d, bf16
  channels_last_3d, cudnn.benchmark) and ours (conv3d.torch.conv3d, --target)
  on the same tensors, interleaved, L2 flushed before each call, CUDA-event
  medians after a warm-up; ours' result is checked against cuDNN's on a
  NaN-poisoned output. Per network: the summed kernel time (layers times
  their counts) both sides, the ratio and the worst layer; beside it the
  whole-network wall time (ours, cuDNN, ours, ... interleaved), which is
  host-bound and noisy.
- --random N --seed S: N distinct random layers of the families these
  networks use (bench/netbench/random_layers.py), timed the same way:
  geometric mean and 5th percentile of the speed ratio; --split F divides
  them into disjoint fit / validation sets (fraction F for fitting).
- --candidates: for each layer of the chosen set, every tile configuration
  the tuner would time (conv3d-run --list-configs: the heuristic's and the
  candidates), each compiled, checked against cuDNN and timed: one CSV row
  per (shape, configuration) with the shape's and configuration's features,
  for fitting a cost model.

Compilation runs ahead of the timing in a pool of --jobs processes (the
GPU machine's 16 cores) filling a fresh disk cache; the timing process
loads each kernel from it. --dry-run lists the layers and their GFLOP (and
with --candidates the configurations) without a GPU.

The speed ratio is cuDNN's time / ours (above 1: ours is faster). Peak:
989 TFLOP/s (H100 SXM dense bf16). Output: the tables, printed last, and
under --out (default $OUT): networks.md / networks.json /
network_layers.csv, random.md / random.csv, candidates.md / candidates.csv.
"""

import argparse
import math
import os
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "python"))

from netbench import compiling, configs, models, random_layers, report, stats  # noqa: E402
from netbench.layers import count_layers  # noqa: E402


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n".join(__doc__.splitlines()[2:]))
    p.add_argument("--networks", nargs="+", default=list(models.ALL), choices=models.ALL,
                   metavar="NAME", help="networks (default: all: %s)" % " ".join(models.ALL))
    p.add_argument("--sizes", nargs="+", type=int, default=[112, 224],
                   help="H = W of the video networks' input (default 112 224)")
    p.add_argument("--batch", type=int, default=2, help="video networks and U-Net batch")
    p.add_argument("--frames", type=int, default=16, help="video networks' frames")
    p.add_argument("--unet-patch", default="128,192,192", help="U-Net input D,H,W")
    p.add_argument("--wan-latent", default="60,104",
                   help="WAN decoder latent H,W (480x832 video / 8)")
    p.add_argument("--wan-frames", type=int, default=1,
                   help="latent frames per WAN decode chunk (1, as WAN decodes)")
    p.add_argument("--wan-batch", type=int, default=1)
    p.add_argument("--random", type=int, metavar="N",
                   help="time N random layers instead of the networks")
    p.add_argument("--seed", type=int, default=1, help="the random layers' seed")
    p.add_argument("--split", type=float, metavar="F",
                   help="split the random layers into disjoint fit (fraction F) and "
                   "validation sets")
    p.add_argument("--candidates", action="store_true",
                   help="time every tile configuration of the tuner per layer "
                   "(cost-model measurements)")
    p.add_argument("--candidate-reps", type=int, default=10,
                   help="timed runs per configuration in --candidates (default 10)")
    p.add_argument("--budget-s", type=float, default=450.0,
                   help="--candidates: take no new layer after this many seconds "
                   "(default 450)")
    p.add_argument("--target", default="sm90", help="our target (default sm90)")
    p.add_argument("--reps", type=int, default=25, help="timed runs per layer (>= 20)")
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--keep-gc", action="store_true",
                   help="leave Python's garbage collector on during the timed calls "
                   "(default: off, as timeit has it)")
    p.add_argument("--wall-reps", type=int, default=10,
                   help="whole-network forward passes per side (0: none)")
    p.add_argument("--max-layers", type=int,
                   help="time only the first K distinct layers (debugging)")
    p.add_argument("--tolerance", type=float, default=1e-2,
                   help="rel. L2 distance to cuDNN above which a layer FAILs")
    p.add_argument("--jobs", type=int, default=compiling.default_jobs(),
                   help="compiling processes (default: cores - 1, at most 16; 0: "
                   "compile in the timing process)")
    p.add_argument("--cache-dir", help="disk cache for the compiled kernels (default: "
                   "a fresh temporary folder, so compile work is not reused by accident)")
    p.add_argument("--tool", help="conv3d-run (default: from PATH, build/bin, .gpu-carry/bin)")
    p.add_argument("--dry-run", action="store_true",
                   help="list the layers and GFLOP (no GPU)")
    p.add_argument("--device", default=None,
                   help="where the forward hooks run when the meta device cannot "
                   "(default: cpu with --dry-run, else cuda)")
    p.add_argument("--out", default=os.environ.get("OUT", "."), help="output folder")
    args = p.parse_args(argv)
    if args.split is not None and not args.random:
        p.error("--split needs --random")
    if args.reps < 1 or args.warmup < 1:
        p.error("--reps and --warmup must be >= 1")
    args.unet_patch = tuple(int(v) for v in args.unet_patch.split(","))
    args.wan_latent = tuple(int(v) for v in args.wan_latent.split(","))
    args.tool = args.tool or find_tool()
    return args


def find_tool():
    for path in (shutil.which("conv3d-run"), os.path.join(ROOT, "build", "bin", "conv3d-run"),
                 os.path.join(ROOT, ".gpu-carry", "bin", "conv3d-run")):
        if path and os.path.exists(path):
            return path
    return None


START = time.time()


def log(message):
    """Progress with the seconds since the start."""
    print("[%7.1f s] %s" % (time.time() - START, message), flush=True)


# Layer sets -------------------------------------------------------------------


def network_sets(args, device):
    """[(Extracted, [(layer, count)])] for the networks and sizes asked."""
    sets = []
    for name in args.networks:
        sizes = args.sizes if name in models.VIDEO else [None]
        for size in sizes:
            if name == "mvit_v2_s" and (size != 224 or args.frames != 16):
                log("%s: skipped at %sx%s x %d frames (it takes 16 x 224 x 224 only)"
                    % (name, size, size, args.frames))
                continue
            try:
                ex = models.extract(name, size, args.batch, args.frames, device,
                                    unet_patch=args.unet_patch, wan_frames=args.wan_frames,
                                    wan_latent=args.wan_latent, wan_batch=args.wan_batch)
            except (ImportError, LookupError) as error:
                log("%s: skipped (%s)" % (name, error))
                break
            sets.append((ex, count_layers(ex.layers)))
            log("%s %s: %d conv calls, %d distinct%s%s" % (
                name, ex.size_label, len(ex.layers), len(sets[-1][1]),
                "".join("; left out %d %s" % (n, why) for why, n in ex.left_out.items()),
                "; " + ex.note if ex.note else ""))
    return sets


def random_set(args):
    """[(layer, family, set name)] of --random N --seed S [--split F]."""
    drawn = random_layers.generate(args.random, args.seed)
    if args.split is None:
        return [(layer, family, "all") for layer, family in drawn]
    fit, validation = random_layers.split(drawn, args.split, args.seed)
    labels = {layer: "fit" for layer, _ in fit}
    labels.update({layer: "validation" for layer, _ in validation})
    return [(layer, family, labels[layer]) for layer, family in drawn]


# Dry run ----------------------------------------------------------------------


def dry_run(args):
    lines = []
    if args.random:
        items = random_set(args)
        lines.append("random layers: seed %d, %d layers%s" % (
            args.seed, len(items), "" if args.split is None else
            ", split %.2f: %d fit, %d validation" % (
                args.split, sum(s == "fit" for _, _, s in items),
                sum(s == "validation" for _, _, s in items))))
        layers = [(layer, 1, "%s/%s" % (fam, s)) for layer, fam, s in items]
    else:
        layers = []
        for ex, counted in network_sets(args, args.device or "cpu"):
            total = sum(layer.flops() * n for layer, n in counted) / 1e9
            lines.append("\n%s %s: %d conv calls, %d distinct, %.1f GFLOP%s" % (
                ex.name, ex.size_label, sum(n for _, n in counted), len(counted), total,
                " (%s)" % ex.note if ex.note else ""))
            for why, n in ex.left_out.items():
                lines.append("  left out: %d %s" % (n, why))
            layers += [(layer, n, ex.name) for layer, n in counted]
    lines.append("| # | set | layer | count | GFLOP | M | N | K | family |"
                 + (" configurations |" if args.candidates else ""))
    lines.append("|---|---|---|---|---|---|---|---|---|" + ("---|" if args.candidates else ""))
    configs_total = 0
    for i, (layer, count, label) in enumerate(layers):
        m, n, k = layer.gemm()
        extra = ""
        if args.candidates:
            listed = compiling.list_configs(layer, args.target, args.tool)
            listed_count = 1 + len([c for c in listed["candidates"]
                                    if c != listed["heuristic"]])
            configs_total += listed_count
            extra = " %d |" % listed_count
        lines.append("| %d | %s | %s | %d | %.2f | %d | %d | %d | %s |%s" % (
            i, label, layer.describe(), count, layer.flops() / 1e9, m, n, k, layer.family(),
            extra))
    gflops = [layer.flops() / 1e9 for layer, _, _ in layers]
    lines.append("\n%d layers; GFLOP per layer: median %.2f, p5 %.3f, max %.1f, total %.1f"
                 % (len(layers), stats.median(gflops), stats.percentile(gflops, 5),
                    max(gflops), sum(gflops)))
    if args.candidates:
        lines.append("configurations to compile and time: %d" % configs_total)
    print("\n".join(lines))


# Timing -----------------------------------------------------------------------


def layer_row(layer, count=1):
    return dict(layer=layer.describe(), count=count, gflop=layer.flops() / 1e9,
                **{k: v for k, v in layer.as_dict().items() if k != "gflop"})


def time_layers(args, layers, timer, measure):
    """Times each distinct layer (compiled ahead by the pool): {layer: row}."""
    pool = compiling.CompilePool(args.jobs, layers, args.target, args.cache_dir, args.tool)
    rows = {}
    for index, listed, compiled in pool.results():
        layer = layers[index]
        row = layer_row(layer)
        heuristic = listed.get("heuristic", "")
        row["config"] = heuristic
        row["kernel"] = configs.short_name(heuristic, args.target) or listed.get("error", "")
        if listed.get("remarks"):
            row["remarks"] = " | ".join(listed["remarks"])
        row["compile_ms"] = compiled[0][1]
        row.update(measure.measure_layer(layer, timer, args.target, seed=index))
        if row.pop("fallback", False):
            row["remarks"] = " | ".join(filter(None, [
                row.get("remarks"), "conv3d.torch ran it on PyTorch's convolution (a fallback)"]))
        ratio = report.layer_columns(row)[0]
        rows[layer] = row
        log("%d/%d %s: ours %s ms, cuDNN %s ms, %s" % (
            index + 1, len(layers), row["layer"], report.fmt(row.get("ours_ms")),
            report.fmt(row.get("cudnn_ms")),
            "%.2fx" % ratio if ratio else row.get("error", "")))
    return rows


NETWORK_HEADER = (
    "| network | input | conv calls (distinct) | ours ms (sum) | cuDNN ms (sum) | "
    "speed vs cuDNN | worst layer | whole net ms, ours / cuDNN (host-bound, noisy) | note |\n"
    "|---|---|---|---|---|---|---|---|---|")


def network_result(ex, counted, timed, args, measure):
    """One network's rows (its distinct layers' timings with their counts),
    kernel-time summary and whole-network wall time."""
    rows = [dict(timed[layer], count=count) for layer, count in counted if layer in timed]
    wall = {}
    if args.wall_reps and ex.module is not None and not args.max_layers:
        try:
            wall = measure.whole_network(ex.module, ex.input_shape, args.target,
                                         args.wall_reps)
        except (RuntimeError, ValueError) as error:
            wall = dict(error=str(error).splitlines()[0][:200])
    return dict(network=ex.name, input=ex.size_label, summary=stats.network_summary(rows),
                wall=wall, left_out=ex.left_out, note=ex.note, layers=rows)


def network_line(result):
    summary, wall = result["summary"], result["wall"]
    left = "; ".join("left out %d %s" % (n, why) for why, n in result["left_out"].items())
    wall_text = ("%.2f / %.2f" % (wall["ours_wall_ms"], wall["cudnn_wall_ms"])
                 if "ours_wall_ms" in wall else wall.get("error", "n/a"))
    return "| %s | %s | %d (%d) | %s | %s | %sx | %sx (%s) | %s | %s |" % (
        result["network"], result["input"], summary["layers"], summary["distinct"],
        report.fmt(summary["ours_ms"]), report.fmt(summary["cudnn_ms"]),
        report.fmt(summary.get("ratio"), ".2f"), report.fmt(summary.get("worst_ratio"), ".2f"),
        summary.get("worst_layer", ""), wall_text,
        "; ".join(filter(None, [left, result["note"]])))


def run_networks(args, timer, measure):
    sets = network_sets(args, args.device or "cuda")
    distinct = []
    for _, counted in sets:
        for layer, _ in counted:
            if layer not in distinct:
                distinct.append(layer)
    if args.max_layers:
        distinct = distinct[:args.max_layers]
    log("%d distinct layers in %d networks" % (len(distinct), len(sets)))
    timed = time_layers(args, distinct, timer, measure)
    results = [network_result(ex, counted, timed, args, measure) for ex, counted in sets]
    lines, csv_rows = [], []
    for result in results:
        lines += ["\n### %s, %s\n" % (result["network"], result["input"]), report.LAYER_HEADER]
        for i, row in enumerate(result["layers"]):
            lines.append(report.layer_line(i, row))
            csv_rows.append(dict(network=result["network"], input=result["input"], **row))
    summary_lines = [NETWORK_HEADER] + [network_line(r) for r in results]
    failed = [r for r in timed.values()
              if r.get("error") or not r.get("rel_l2", math.inf) <= args.tolerance]
    all_errors = [r["rel_l2"] for r in timed.values() if r.get("rel_l2") is not None]
    # Issue 21's targets: every network's sum >= 1.2x cuDNN, no layer < 0.8x.
    ratios = [r["summary"]["ratio"] for r in results if "ratio" in r["summary"]]
    slow = [r for r in timed.values() if (report.layer_columns(r)[0] or math.inf) < 0.8]
    summary_lines.append("\nnetworks whose summed kernel time is >= 1.2x cuDNN's: %d of %d; "
                         "distinct layers below 0.8x: %d of %d" % (
                             sum(x >= 1.2 for x in ratios), len(ratios), len(slow),
                             len(timed)))
    tail = ["", "max rel. L2 distance to cuDNN over %d layers: %s; %d layer(s) FAIL "
            "(error or distance > %g)" % (len(all_errors), report.fmt(
                max(all_errors) if all_errors else None, ".2e"), len(failed), args.tolerance)]
    for r in failed:
        tail.append("  FAIL %s: %s" % (r["layer"], r.get("error") or "rel. L2 %s" % r.get(
            "rel_l2")))
    header = describe_run(args, timer)
    text = "\n".join([header, "\n## Layers"] + lines + ["\n## Networks\n"] + summary_lines
                     + tail)
    report.write_text(report.out_path(args.out, "networks.md"), text)
    report.write_json(report.out_path(args.out, "networks.json"),
                      dict(run=header, networks=results))
    report.write_csv(report.out_path(args.out, "network_layers.csv"), csv_rows)
    print(text)
    print("\n" + "\n".join([header, ""] + summary_lines + tail))
    return 1 if failed else 0


def run_random(args, timer, measure):
    items = random_set(args)
    if args.max_layers:
        items = items[:args.max_layers]
    layers = [layer for layer, _, _ in items]
    timed = time_layers(args, layers, timer, measure)
    rows, lines = [], [report.LAYER_HEADER.replace("| # | layer |", "| # | set / family | layer |")
                       .replace("|---|---|", "|---|---|---|", 1)]
    for i, (layer, family, label) in enumerate(items):
        row = dict(timed[layer], set=label, generator_family=family)
        rows.append(row)
        lines.append(report.layer_line(i, row).replace(
            "| %d |" % i, "| %d | %s / %s |" % (i, label, family), 1))
    summary = ["| set | layers | geomean speed vs cuDNN | 5th percentile | min | max |",
               "|---|---|---|---|---|---|"]
    groups = [("all", rows)]
    if args.split is not None:
        groups += [(s, [r for r in rows if r["set"] == s]) for s in ("fit", "validation")]
    families = sorted({r["generator_family"] for r in rows})
    groups += [("family " + f, [r for r in rows if r["generator_family"] == f])
               for f in families]
    for name, group in groups:
        ratios = [r["cudnn_ms"] / r["ours_ms"] for r in group
                  if r.get("ours_ms") and r.get("cudnn_ms")]
        s = stats.ratio_summary(ratios)
        if not s["count"]:
            continue
        summary.append("| %s | %d | %.3fx | %.3fx | %.2fx | %.2fx |" % (
            name, s["count"], s["geomean"], s["p5"], s["min"], s["max"]))
    failed = [r for r in rows if r.get("error") or not r.get("rel_l2", math.inf) <= args.tolerance]
    errors = [r["rel_l2"] for r in rows if r.get("rel_l2") is not None]
    tail = ["", "seed %d; max rel. L2 distance to cuDNN %s; %d layer(s) FAIL" % (
        args.seed, report.fmt(max(errors) if errors else None, ".2e"), len(failed))]
    tail += ["  FAIL %s: %s" % (r["layer"], r.get("error") or r.get("rel_l2")) for r in failed]
    header = describe_run(args, timer)
    text = "\n".join([header, "\n## Layers\n"] + lines + ["\n## Summary\n"] + summary + tail)
    report.write_text(report.out_path(args.out, "random.md"), text)
    report.write_csv(report.out_path(args.out, "random.csv"), rows)
    print(text)
    print("\n" + "\n".join([header, ""] + summary + tail))
    return 1 if failed else 0


def describe_run(args, timer):
    import torch
    import conv3d
    props = torch.cuda.get_device_properties(0)
    return ("# conv3d network benchmark\n\ndevice: %s (%d SMs), torch %s, cuDNN %s, "
            "conv3d %s (%s); target %s; medians of %d runs after %d warm-up runs, L2 "
            "flushed (%d MiB write) before each, ours and cuDNN interleaved; speed = "
            "cuDNN ms / ours ms; peak 989 TFLOP/s; command: %s" % (
                props.name, props.multi_processor_count, torch.__version__,
                torch.backends.cudnn.version(), conv3d.library_version(),
                conv3d.library_path(), args.target, args.reps, args.warmup,
                timer.flush_bytes >> 20, " ".join(sys.argv)))


def main(argv=None):
    args = parse_args(argv)
    if args.dry_run:
        dry_run(args)
        return 0
    # The timing process's engine loads what the pool compiled: the default
    # engine reads its cache folder from the environment when created.
    fresh = not args.cache_dir
    args.cache_dir = args.cache_dir or tempfile.mkdtemp(prefix="conv3d-networks-")
    os.environ["CONV3D_CACHE_DIR"] = args.cache_dir
    # Unbounded: the candidates of a few hundred layers outgrow the default
    # 1 GiB, and an evicted kernel would be compiled again while timing.
    os.environ.setdefault("CONV3D_CACHE_MAX_MB", "0")
    try:
        return run(args)
    finally:
        if fresh:
            shutil.rmtree(args.cache_dir, ignore_errors=True)


def run(args):
    import torch
    torch.backends.cudnn.benchmark = True
    import timing
    from netbench import measure
    timer = timing.Timer(args.reps, args.warmup, keep_gc=args.keep_gc)
    log("compiling with %d processes into %s; conv3d-run: %s" % (
        args.jobs, args.cache_dir, args.tool))
    with torch.inference_mode():
        if args.candidates:
            from netbench import candidates
            return candidates.run(args, timer, random_set(args) if args.random else None,
                                  network_sets if not args.random else None, log)
        if args.random:
            return run_random(args, timer, measure)
        return run_networks(args, timer, measure)


if __name__ == "__main__":
    sys.exit(main())
