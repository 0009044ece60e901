"""conv3d.upsample on the CPU (test/Python/upsample-conv.test): the folded
filter is exact (float64, PyTorch's transposed convolution against
upsampling then convolving) on random windows, paddings and scales; the
library's transposed convolution computes it (float32, CPU target); the
refusals name the problem."""
import random
import sys

import torch
import torch.nn.functional as F

import conv3d.upsample as cu

torch.manual_seed(25)
rng = random.Random(25)


def rel(a, b):
    return float((a.double() - b.double()).norm() / b.double().norm())


worst, done = 0.0, 0
for case in range(16):
    scale = [rng.choice((1, 2)) for _ in range(3)]
    window = [rng.randint(1, 4) for _ in range(3)]
    padding = [rng.randint(0, k - 1) for k in window]
    x = torch.randn(rng.randint(1, 2), rng.randint(1, 5), rng.randint(1, 4),
                    rng.randint(1, 5), rng.randint(1, 5), dtype=torch.float64)
    upsampled = [s * n for s, n in zip(scale, x.shape[2:])]
    if any(u + 2 * p < k for u, p, k in zip(upsampled, padding, window)):
        continue  # the window does not fit
    w = torch.randn((rng.randint(1, 6), x.shape[1]) + tuple(window), dtype=torch.float64)
    b = torch.randn(w.shape[0], dtype=torch.float64)
    reference = F.conv3d(F.interpolate(x, scale_factor=scale, mode="nearest"), w, b,
                         padding=padding)
    weight_t, stride, padding_t = cu.upsample_conv_weight(w, scale, padding)
    worst = max(worst, rel(F.conv_transpose3d(x, weight_t, b, stride=stride,
                                              padding=padding_t), reference))
    done += 1
print("float64 folded filter, %s geometries: %s" % (
    "10 or more" if done >= 10 else done, "EXACT" if worst < 1e-13 else "BAD %.2e" % worst))
if len(sys.argv) > 1 and sys.argv[1] == "library":
    for scale, window, padding in (((1, 2, 2), (1, 3, 3), (0, 1, 1)),
                                   ((2, 2, 2), (3, 3, 3), (1, 1, 1))):
        x = torch.randn(2, 5, 3, 4, 5)
        w = torch.randn((6, 5) + window)
        b = torch.randn(6)
        reference = F.conv3d(F.interpolate(x.double(), scale_factor=scale, mode="nearest"),
                             w.double(), b.double(), padding=padding)
        y = cu.upsample_conv3d(x, w, b, scale, padding, target="cpu")
        error = rel(y, reference)
        print("library scale %s window %s: shape %s, rel_l2 %s" % (
            "x".join(map(str, scale)), "x".join(map(str, window)),
            "OK" if y.shape == reference.shape else "BAD %s" % (tuple(y.shape),),
            "OK" if error < 1e-5 else "BAD %.2e" % error))
    # Differentiable: the gradients of the input, the filter (through the
    # folding's own torch ops) and the bias equal those of upsampling then
    # convolving, in float64 (the kernels compute float32).
    x = torch.randn(1, 3, 2, 3, 4, dtype=torch.float64, requires_grad=True)
    w = torch.randn(4, 3, 1, 3, 3, dtype=torch.float64, requires_grad=True)
    b = torch.randn(4, dtype=torch.float64, requires_grad=True)
    y = cu.upsample_conv3d(x, w, b, (1, 2, 2), (0, 1, 1), target="cpu")
    g = torch.randn(y.shape, dtype=torch.float64)
    grads = torch.autograd.grad((y * g).sum(), (x, w, b))
    reference = F.conv3d(F.interpolate(x, scale_factor=(1, 2, 2), mode="nearest"), w, b,
                         padding=(0, 1, 1))
    expected = torch.autograd.grad((reference * g).sum(), (x, w, b))
    errors = [rel(a, e) for a, e in zip(grads, expected)]
    print("gradients (input, filter, bias): %s" % (
        "OK" if max(errors) < 1e-5 else "BAD %s" % ["%.2e" % e for e in errors]))
for name, call in (
        ("scale 3", lambda: cu.upsample_conv_weight(torch.zeros(2, 2, 3, 3, 3), 3)),
        ("padding 3", lambda: cu.upsample_conv_weight(torch.zeros(2, 2, 3, 3, 3), 2, 3)),
        ("rank 4", lambda: cu.upsample_conv_weight(torch.zeros(2, 2, 3, 3))),
        ("padding pair", lambda: cu.upsample_conv_weight(torch.zeros(2, 2, 3, 3, 3), 2,
                                                          (1, 1)))):
    try:
        call()
        print("%s: accepted" % name)
    except ValueError as error:
        print("%s: ValueError: %s" % (name, error))
print("UPSAMPLE-CONV-OK")
