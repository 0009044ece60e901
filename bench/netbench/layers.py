"""One 3-D convolution layer as a network calls it, and its counts.

A ConvLayer holds what decides a convolution kernel's time: the input
shape (N, C, D, H, W), the filters (F, Q, R, S), stride, symmetric padding,
dilation, groups (1: dense) and whether a bias is added. Causal convolutions are described as
their callers run them (WAN's decoder, bench/shapes.json's "wan" shapes):
the cached frames are part of the input's depth and pad_d is 0.

Nothing here imports PyTorch: the random generator and the statistics are
tested without it (test/Python/bench-networks.test).
"""

import collections
import dataclasses
import math

# H100 SXM spec peak, dense bf16 with f32 accumulation (the yardstick).
PEAK_TFLOPS = 989.0


@dataclasses.dataclass(frozen=True)
class ConvLayer:
    n: int
    c: int
    d: int
    h: int
    w: int
    f: int
    kernel: tuple  # (Q, R, S)
    stride: tuple = (1, 1, 1)
    padding: tuple = (0, 0, 0)  # (d, h, w), both sides
    dilation: tuple = (1, 1, 1)
    bias: bool = False
    groups: int = 1  # C and F multiples of it; C == groups: depthwise

    def __post_init__(self):
        for name in ("kernel", "stride", "padding", "dilation"):
            value = tuple(int(v) for v in getattr(self, name))
            if len(value) != 3:
                raise ValueError("%s must have 3 values, got %r" % (name, value))
            object.__setattr__(self, name, value)
        if min(self.n, self.c, self.d, self.h, self.w, self.f) < 1:
            raise ValueError("sizes must be positive: %r" % (self,))
        if self.groups < 1 or self.c % self.groups or self.f % self.groups:
            raise ValueError("groups must divide C and F: %r" % (self,))
        if any(o < 1 for o in self.output_spatial()):
            raise ValueError("the window does not fit the padded input: %r" % (self,))

    # Geometry (PyTorch's output-size formula, the one cuDNN computes).
    def output_spatial(self):
        return tuple((size + 2 * p - dil * (k - 1) - 1) // s + 1
                     for size, k, s, p, dil in zip((self.d, self.h, self.w), self.kernel,
                                                   self.stride, self.padding, self.dilation))

    def input_shape(self):
        """NCDHW, PyTorch's order."""
        return (self.n, self.c, self.d, self.h, self.w)

    def weight_shape(self):
        return (self.f, self.c // self.groups) + self.kernel

    def output_shape(self):
        return (self.n, self.f) + self.output_spatial()

    def gemm(self):
        """The implicit GEMM's (M, N, K): output voxels, filters, taps x C
        (x C/groups: a grouped layer's GEMMs, all groups' N together)."""
        do, ho, wo = self.output_spatial()
        return self.n * do * ho * wo, self.f, self.c // self.groups * math.prod(self.kernel)

    def flops(self):
        m, n, k = self.gemm()
        return 2 * m * n * k

    def bytes_moved(self, element_bytes=2):
        """Input, filter and output once each: the DRAM traffic's lower bound."""
        return element_bytes * (math.prod(self.input_shape()) + math.prod(self.weight_shape())
                                + math.prod(self.output_shape()))

    def family(self):
        """The kind of layer, for the tables and the cost model's features."""
        q, r, s = self.kernel
        strided = "/s%s" % "".join(map(str, self.stride)) if self.stride != (1, 1, 1) else ""
        if self.groups > 1:
            name = "depthwise" if self.groups == self.c else "grouped"
        elif self.c <= 4:
            name = "stem"
        elif self.kernel == (1, 1, 1):
            name = "pointwise"
        elif r == 1 and s == 1:
            name = "temporal"
        elif q == 1:
            name = "spatial"
        else:
            name = "%dx%dx%d" % self.kernel
        return name + strided

    def describe(self):
        """N=2 C=64->128 16x56x56 k3x3x3 s1x2x2 p1x1x1 (+bias)."""
        text = "N=%d C=%d->%d %dx%dx%d k%s" % (self.n, self.c, self.f, self.d, self.h, self.w,
                                                 "x".join(map(str, self.kernel)))
        if self.stride != (1, 1, 1):
            text += " s" + "x".join(map(str, self.stride))
        if self.padding != (0, 0, 0):
            text += " p" + "x".join(map(str, self.padding))
        if self.dilation != (1, 1, 1):
            text += " d" + "x".join(map(str, self.dilation))
        if self.groups != 1:
            text += " g%d" % self.groups
        return text + (" +bias" if self.bias else "")

    def as_dict(self):
        m, n, k = self.gemm()
        do, ho, wo = self.output_spatial()
        return dict(N=self.n, C=self.c, D=self.d, H=self.h, W=self.w, F=self.f,
                    Q=self.kernel[0], R=self.kernel[1], S=self.kernel[2],
                    stride_d=self.stride[0], stride_h=self.stride[1], stride_w=self.stride[2],
                    pad_d=self.padding[0], pad_h=self.padding[1], pad_w=self.padding[2],
                    dil_d=self.dilation[0], dil_h=self.dilation[1], dil_w=self.dilation[2],
                    bias=int(self.bias), groups=self.groups, Do=do, Ho=ho, Wo=wo, gemm_m=m, gemm_n=n, gemm_k=k,
                    gflop=self.flops() / 1e9, mbytes=self.bytes_moved() / 1e6,
                    family=self.family())

    @classmethod
    def from_dict(cls, row):
        """The layer of an as_dict() row (of a CSV this package wrote:
        values may be text)."""
        i = lambda key: int(float(row[key]))  # noqa: E731
        return cls(i("N"), i("C"), i("D"), i("H"), i("W"), i("F"),
                   (i("Q"), i("R"), i("S")),
                   (i("stride_d"), i("stride_h"), i("stride_w")),
                   (i("pad_d"), i("pad_h"), i("pad_w")),
                   (i("dil_d"), i("dil_h"), i("dil_w")),
                   str(row["bias"]) in ("1", "True", "true"),
                   i("groups") if row.get("groups") not in (None, "") else 1)

    def spec_args(self):
        """conv3d.Spec.from_shapes arguments for these tensors in
        channels_last_3d (NDHWC input, FQRSC filter), as conv3d.conv3d
        compiles them."""
        q, r, s = self.kernel
        pd, ph, pw = self.padding
        args = dict(input_shape=(self.n, self.d, self.h, self.w, self.c),
                    filter_shape=(q, r, s, self.c // self.groups, self.f),
                    strides=self.stride, dilations=self.dilation,
                    padding=(pd, pd, ph, ph, pw, pw), filter_layout="fqrsc", dtype="bf16",
                    bias=self.bias)
        if self.groups != 1:
            args["groups"] = self.groups
        return args


def layer_of_module(module, input_shape):
    """The ConvLayer of an nn.Conv3d (or subclass) called on `input_shape`
    (N, C, D, H, W); None for what conv3d does not compute (padding modes
    other than zeros; string paddings are resolved)."""
    if module.padding_mode != "zeros":
        return None
    n, c, d, h, w = (int(v) for v in input_shape)
    kernel = tuple(module.kernel_size)
    dilation = tuple(module.dilation)
    padding = module.padding
    if isinstance(padding, str):
        if padding == "valid":
            padding = (0, 0, 0)
        else:  # "same" with stride 1: PyTorch puts the odd element on the high side
            totals = [dl * (k - 1) for k, dl in zip(kernel, dilation)]
            if any(t % 2 for t in totals):
                return None  # asymmetric: outside what ConvLayer describes
            padding = tuple(t // 2 for t in totals)
    return ConvLayer(n, c, d, h, w, module.out_channels, kernel, tuple(module.stride),
                     tuple(padding), dilation, module.bias is not None, module.groups)


def count_layers(layers):
    """[(layer, count)] of the distinct layers, in order of first appearance."""
    counts = collections.Counter(layers)
    seen, result = set(), []
    for layer in layers:
        if layer not in seen:
            seen.add(layer)
            result.append((layer, counts[layer]))
    return result
