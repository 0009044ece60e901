#!/usr/bin/env python3
"""conv3d.torch without PyTorch: `import conv3d` and `import conv3d.torch`
work, and using conv3d.torch names PyTorch as what is missing. Where
PyTorch is installed, the same names are there and the CPU path of the
custom op is checked against torch's own conv3d instead."""

import sys

import conv3d

assert "torch" not in sys.modules, "import conv3d imported torch"
print("import conv3d: torch not imported")
import conv3d.torch as ct  # noqa: E402

try:
    import torch
    if not hasattr(torch.library, "custom_op"):
        torch = None  # too old for conv3d.torch: it reports itself unavailable
except ImportError:
    torch = None

if torch is None:
    for name in ("conv3d", "Conv3d", "convert"):
        try:
            getattr(ct, name)
        except ImportError as e:
            assert "needs PyTorch" in str(e), str(e)
            print("without PyTorch: conv3d.torch.%s -> ImportError: %s" % (name, e))
        else:
            raise AssertionError("conv3d.torch.%s exists without PyTorch" % name)
    print("PyTorch: absent")
else:
    x = torch.randn(1, 8, 4, 6, 6)
    w = torch.randn(8, 8, 3, 3, 3) * 0.2
    y = ct.conv3d(x, w, padding=1)
    ref = torch.nn.functional.conv3d(x.double(), w.double(), padding=1)
    err = ((y.double() - ref).norm() / ref.norm()).item()
    assert err < 1e-5, err
    print("without PyTorch: skipped (PyTorch %s is installed; CPU op rel_l2=%.1e)"
          % (torch.__version__, err))
    print("PyTorch: present")
print("TORCH-OPTIONAL-OK")
