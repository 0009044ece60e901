"""Candidate measurements for fitting a cost model (bench/networks.py
--candidates): per layer, every tile configuration the tuner would time
(conv3d-run --list-configs: the heuristic's and the candidates), compiled
ahead in the pool, checked against cuDNN on a NaN-poisoned output and
timed interleaved with the others and cuDNN (L2 flushed before each call).
One CSV row per (layer, configuration): the layer's features, the
configuration's fields and what follows from them (tiles, CTAs, waves on
this GPU's SMs, tile efficiency), the median time and its ratios to the
layer's best configuration and to cuDNN."""

import statistics
import sys
import time

import torch
import torch.nn.functional as F

import conv3d

from . import compiling, configs, report, stats
from .measure import layer_tensors, rel_l2

def measure_layer(layer, listed, compiled, timer, args, seed, sms):
    """The rows of one layer's configurations (and its cuDNN time)."""
    x, w, b = layer_tensors(layer, seed)
    b32 = b.float().contiguous() if b is not None else None
    conv_args = (layer.stride, layer.padding, layer.dilation)
    reference = F.conv3d(x, w, b, *conv_args)
    spec = conv3d.Spec.from_shapes(**layer.spec_args())
    stream = torch.cuda.current_stream().cuda_stream
    y = torch.empty(layer.output_shape(), device="cuda", dtype=torch.bfloat16).contiguous(
        memory_format=torch.channels_last_3d)
    # A fresh engine per layer: its memory cache (loaded GPU modules) goes
    # with it; the kernels come from the pool's disk cache.
    engine = conv3d.Engine(cache_dir=args.cache_dir)
    heuristic = listed.get("heuristic", "")
    rows, calls = {}, {}
    for config, compile_ms, error in compiled:
        text = config or heuristic
        row = dict(config=text, is_heuristic=int(config == ""), compile_ms=compile_ms)
        row.update(configs.features(layer, text, args.target, sms) if text else {})
        rows[config] = row
        if error:
            row["error"] = error
            continue
        try:
            conv = engine.compile(spec, target=args.target, config=config or None)
        except conv3d.Conv3dError as failure:
            row["error"] = compiling.short_error(failure)
            continue

        def call(conv=conv):
            conv.run(x.data_ptr(), w.data_ptr(), y.data_ptr(),
                     bias=b32.data_ptr() if b32 is not None else None, stream=stream)
        y.fill_(float("nan"))
        try:
            call()
        except conv3d.Conv3dError as failure:
            row["error"] = compiling.short_error(failure)
            continue
        row["rel_l2"] = rel_l2(y, reference)
        if not row["rel_l2"] <= args.tolerance:
            row["error"] = "wrong result: rel. L2 %.2e to cuDNN" % row["rel_l2"]
            continue
        calls[config] = call
    calls["cudnn"] = lambda: F.conv3d(x, w, b, *conv_args)
    times = timer.interleaved(calls, reps=args.candidate_reps, warmup=2)
    cudnn_ms = statistics.median(times.pop("cudnn"))
    for config, samples in times.items():
        rows[config].update(ms=statistics.median(samples), ms_min=min(samples))
    best = min((r["ms"] for r in rows.values() if "ms" in r), default=None)
    for row in rows.values():
        row["cudnn_ms"] = cudnn_ms
        if "ms" in row:
            row.update(vs_best=row["ms"] / best, is_best=int(row["ms"] == best),
                       speed_vs_cudnn=cudnn_ms / row["ms"])
    return list(rows.values())


def run(args, timer, random_items, network_sets, log):
    """The --candidates mode: rows to candidates.csv, a summary to
    candidates.md and the screen."""
    start = time.time()
    if random_items is None:
        items, seen = [], set()
        for ex, counted in network_sets(args, args.device or "cuda"):
            for layer, _ in counted:
                if layer not in seen:
                    seen.add(layer)
                    items.append((layer, layer.family(), ex.name))
    else:
        items = random_items
    if args.max_layers:
        items = items[:args.max_layers]
    layers = [layer for layer, _, _ in items]
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    pool = compiling.CompilePool(args.jobs, layers, args.target, args.cache_dir, args.tool,
                                 all_candidates=True)
    rows, per_layer = [], []
    stopped = None
    for index, listed, compiled in pool.results():
        elapsed = time.time() - start
        if elapsed > args.budget_s:
            stopped = "stopped after %d of %d layers: --budget-s %.0f reached" % (
                index, len(items), args.budget_s)
            log(stopped)
            break
        layer, family, label = items[index]
        layer_rows = measure_layer(layer, listed, compiled, timer, args, index, sms)
        base = dict(index=index, set=label, generator_family=family, layer=layer.describe(),
                    **layer.as_dict())
        if listed.get("remarks"):
            base["remarks"] = " | ".join(listed["remarks"])
        if listed.get("error"):
            base["list_error"] = listed["error"]
        for row in layer_rows:
            rows.append(dict(base, **row))
        timed = [r for r in layer_rows if "ms" in r]
        heuristic = next((r for r in layer_rows if r["is_heuristic"] and "ms" in r), None)
        best = min(timed, key=lambda r: r["ms"]) if timed else None
        per_layer.append(dict(set=label, layer=base["layer"], configs=len(layer_rows),
                              timed=len(timed), heuristic=heuristic, best=best))
        log("%d/%d %s: %d configurations, %d timed; heuristic %s ms, best %s ms, cuDNN %s ms"
            % (index + 1, len(items), base["layer"], len(layer_rows), len(timed),
               report.fmt(heuristic and heuristic["ms"]), report.fmt(best and best["ms"]),
               report.fmt(layer_rows[0]["cudnn_ms"] if layer_rows else None)))
    text = summarize(args, per_layer, rows, time.time() - start, stopped)
    report.write_csv(report.out_path(args.out, "candidates.csv"), rows)
    report.write_text(report.out_path(args.out, "candidates.md"), text)
    print(text)
    return 0


def summarize(args, per_layer, rows, elapsed, stopped):
    lines = ["# candidate measurements: %s" % " ".join(sys.argv), "",
             "| set | layers | heuristic within 10% of the best | geomean best / heuristic "
             "speed-up | geomean speed vs cuDNN, heuristic | the same, best |",
             "|---|---|---|---|---|---|"]
    sets = sorted({p["set"] for p in per_layer})
    for name in ["all"] + (sets if len(sets) > 1 else []):
        group = [p for p in per_layer if (name == "all" or p["set"] == name)
                 and p["heuristic"] and p["best"]]
        if not group:
            continue
        near = sum(p["heuristic"]["ms"] <= 1.1 * p["best"]["ms"] for p in group)
        lines.append("| %s | %d | %d (%.0f%%) | %.3fx | %.3fx | %.3fx |" % (
            name, len(group), near, 100 * near / len(group),
            stats.geomean(p["heuristic"]["ms"] / p["best"]["ms"] for p in group),
            stats.geomean(p["heuristic"]["speed_vs_cudnn"] for p in group),
            stats.geomean(p["best"]["speed_vs_cudnn"] for p in group)))
    failed = [r for r in rows if r.get("error")]
    wrong = [r for r in failed if r["error"].startswith("wrong result")]
    lines += ["", "%d layers, %d configurations (%d timed, %d refused by the compiler, %d "
              "wrong results), %.0f s elapsed%s" % (
                  len(per_layer), len(rows), sum("ms" in r for r in rows),
                  len(failed) - len(wrong), len(wrong), elapsed,
                  "; " + stopped if stopped else "")]
    for r in wrong:
        lines.append("  WRONG %s %s: %s" % (r["layer"], r["config"], r["error"]))
    return "\n".join(lines)
