"""The statistics of the network benchmark: geometric means, percentiles,
medians and per-network sums. Plain Python (no NumPy, no PyTorch)."""

import math
import statistics


def geomean(values):
    values = list(values)
    if not values:
        raise ValueError("geomean of no values")
    if any(not v > 0 for v in values):
        raise ValueError("geomean needs positive values, got %r" % (min(values),))
    return math.exp(sum(math.log(v) for v in values) / len(values))


def percentile(values, p):
    """The p-th percentile (0-100) with linear interpolation between the
    closest ranks (NumPy's default method)."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("percentile of no values")
    if not 0 <= p <= 100:
        raise ValueError("p must be in [0, 100], got %r" % (p,))
    position = p / 100 * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def median(values):
    return statistics.median(values)


def ratio_summary(ratios):
    """geomean, 5th percentile, minimum, maximum and count of speed ratios
    (cuDNN time / ours: above 1 is faster than cuDNN)."""
    ratios = list(ratios)
    if not ratios:
        return dict(count=0)
    return dict(count=len(ratios), geomean=geomean(ratios), p5=percentile(ratios, 5),
                min=min(ratios), max=max(ratios))


def network_summary(rows):
    """Summed kernel time of a network from its per-layer rows (dicts with
    count, ours_ms and cudnn_ms; rows without both times are skipped and
    counted): each distinct layer's time times how often it runs."""
    timed = [r for r in rows if r.get("ours_ms") and r.get("cudnn_ms")]
    ours = sum(r["count"] * r["ours_ms"] for r in timed)
    cudnn = sum(r["count"] * r["cudnn_ms"] for r in timed)
    summary = dict(layers=sum(r["count"] for r in rows), distinct=len(rows),
                   untimed=len(rows) - len(timed), ours_ms=ours, cudnn_ms=cudnn)
    if timed:
        summary["ratio"] = cudnn / ours
        worst = min(timed, key=lambda r: r["cudnn_ms"] / r["ours_ms"])
        summary["worst_ratio"] = worst["cudnn_ms"] / worst["ours_ms"]
        summary["worst_layer"] = worst.get("layer", "")
    return summary
