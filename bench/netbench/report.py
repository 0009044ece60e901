"""Tables (Markdown) and files (CSV, JSON) of the network benchmark."""

import csv
import json
import math
import os

from .layers import PEAK_TFLOPS


def fmt(value, spec=".3f", empty=""):
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return empty
    return format(value, spec)


def layer_columns(row):
    """The per-layer figures both modes print: ratio, TFLOP/s, % of peak."""
    ours, cudnn = row.get("ours_ms"), row.get("cudnn_ms")
    ratio = cudnn / ours if ours and cudnn else None
    tflops = row["gflop"] / ours if ours else None  # GFLOP / ms = TFLOP/s
    peak = 100 * tflops / PEAK_TFLOPS if tflops else None
    return ratio, tflops, peak


LAYER_HEADER = ("| # | layer | count | GFLOP | ours ms | cuDNN ms | speed vs cuDNN | "
                "ours TFLOP/s | % of peak | ours' kernel | rel. L2 vs cuDNN |\n"
                "|---|---|---|---|---|---|---|---|---|---|---|")


def layer_line(index, row):
    ratio, tflops, peak = layer_columns(row)
    kernel = row.get("kernel", "")
    if row.get("error"):
        kernel = "error: " + row["error"][:80]
    return ("| %d | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s |"
            % (index, row["layer"], row.get("count", 1), fmt(row["gflop"], ".2f"),
               fmt(row.get("ours_ms")), fmt(row.get("cudnn_ms")),
               fmt(ratio, ".2f") + ("x" if ratio else ""), fmt(tflops, ".0f"),
               fmt(peak, ".0f") + ("%" if peak else ""), kernel,
               fmt(row.get("rel_l2"), ".1e")))


def write_csv(path, rows):
    """rows: dicts; the columns are the union of their keys, in first-seen
    order."""
    columns = []
    for row in rows:
        for key in row:
            if key not in columns:
                columns.append(key)
    with open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns)
        writer.writeheader()
        for row in rows:
            writer.writerow(row)


def write_json(path, data):
    with open(path, "w") as fh:
        json.dump(data, fh, indent=1, default=str)


def write_text(path, text):
    with open(path, "w") as fh:
        fh.write(text + "\n")


def out_path(folder, name):
    os.makedirs(folder, exist_ok=True)
    return os.path.join(folder, name)
