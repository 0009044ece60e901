"""The benchmark suite (bench/shapes.json) as the kernel benchmarks read it
(run_bench.py, grad_bench.py, profile_kernels.py): the --suite and --only
flags and the shapes they select, a shape's conv3d.Spec.from_shapes
arguments (input NDHWC, filter FQRSC, bf16) and random bf16
channels_last_3d tensors, and the results written beside the printed
table."""

import json
import math
import os

SHAPES_JSON = os.path.join(os.path.dirname(os.path.abspath(__file__)), "shapes.json")


def add_arguments(parser):
    parser.add_argument("--suite", default=SHAPES_JSON)
    parser.add_argument("--only", nargs="*", help="shape names (default: all)")


def shapes(args):
    """The suite's shapes that --only names (all without it), in order."""
    with open(args.suite) as f:
        selected = json.load(f)["shapes"]
    return [s for s in selected if not args.only or s["name"] in args.only]


def geometry(shape):
    """(stride, padding per axis, dilation) of a suite shape."""
    return shape["stride"], shape["pad"], shape.get("dilation", [1, 1, 1])


def spec_args(shape, dtype="bf16"):
    """conv3d.Spec.from_shapes's arguments for a suite shape."""
    n, c, d, h, w, f = (shape[k] for k in ("N", "C", "D", "H", "W", "F"))
    q, r, s = shape["k"]
    stride, pad, dilation = geometry(shape)
    return dict(input_shape=(n, d, h, w, c), filter_shape=(q, r, s, c, f), strides=stride,
                dilations=dilation, padding=(pad[0], pad[0], pad[1], pad[1], pad[2], pad[2]),
                filter_layout="fqrsc", dtype=dtype)


def random_input(shape):
    """A random NCDHW bf16 channels_last_3d input on CUDA."""
    import torch
    dims = [shape[k] for k in ("N", "C", "D", "H", "W")]
    return torch.randn(*dims, device="cuda").to(torch.bfloat16).contiguous(
        memory_format=torch.channels_last_3d)


def random_weight(shape, scaled=True):
    """A random (F, C, Q, R, S) bf16 channels_last_3d weight on CUDA, by
    default scaled by 1/sqrt(Q R S C) (outputs of order 1)."""
    import torch
    q, r, s = shape["k"]
    w = torch.randn(shape["F"], shape["C"], q, r, s, device="cuda")
    if scaled:
        w = w / math.sqrt(q * r * s * shape["C"])
    return w.to(torch.bfloat16).contiguous(memory_format=torch.channels_last_3d)


def write(out_dir, stem, results, table):
    """Prints the table and writes it (stem.md) with the results
    (stem.json) into out_dir."""
    print(table)
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, stem + ".json"), "w") as f:
        json.dump(results, f, indent=1)
    with open(os.path.join(out_dir, stem + ".md"), "w") as f:
        f.write(table + "\n")
