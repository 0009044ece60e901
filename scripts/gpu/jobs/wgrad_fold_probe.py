"""Which forward form should a weight gradient take on sm90? Times the
forward convolution of two forms of the same weight gradient (random data
of the forms' shapes), against cuDNN's whole weight gradient of the
original layer (torch.nn.grad.conv3d_weight), with bench/timing.py's Timer
(L2 flushed, medians):
  width  today's form (GradientGeometry's wgradAsForward): the S width taps
         x C channels gathered into columns, the window Do x Ho taps of
         Wo*N channels each (K per tap 104-112 on the WAN layers);
  hw     height folded too: R*S*C columns, the window Do taps of Ho*Wo*N
         channels each (R*S gathered copies of the input instead of S).
Stride-1, symmetric-padding layers only (the forms' padding is then
symmetric too). Run on the GPU machine from the repository root with the
carried build's environment (scripts/gpu/env.sh)."""
import json, statistics, sys, torch, torch.nn.functional as F
sys.path.insert(0, "bench")
import conv3d
import timing

torch.backends.cudnn.benchmark = True
CL = torch.channels_last_3d
shapes = {s["name"]: s for s in json.load(open("bench/shapes.json"))["shapes"]}
names = sys.argv[1:] or ["modelopt_seed", "wan_chunk_mid", "latent_in_16", "video_r3d_64",
                         "unet3d_32", "pointwise_384", "wan_mid_full"]


def align8(v):
    return (v + 7) // 8 * 8


def rand(*shape):
    return torch.randn(*shape, device="cuda").bfloat16().contiguous(memory_format=CL)


for name in names:
    s = shapes[name]
    n, c, f = s["N"], s["C"], s["F"]
    q, r, sw = s["k"]
    pd, ph, pw = s["pad"]
    if s["stride"] != [1, 1, 1]:
        continue
    do, ho, wo = (s[a] + 2 * p - k + 1 for a, p, k in zip("DHW", s["pad"], s["k"]))
    # The input rows the taps read (wgradAsForward's inputExtent), its
    # symmetric depth and height padding.
    dext = min(do + q - 1 - pd, s["D"])
    hext = min(ho + r - 1 - ph, s["H"])
    forms = {}
    k1 = align8(wo * n)
    forms["width"] = (rand(1, k1, dext, hext, sw * c), rand(f, k1, do, ho, 1), (pd, ph, 0))
    k2 = align8(ho * wo * n)
    forms["hw"] = (rand(1, k2, dext, 1, r * sw * c), rand(f, k2, do, 1, 1), (pd, 0, 0))
    x = rand(n, c, s["D"], s["H"], s["W"])
    dy = rand(n, f, do, ho, wo)
    calls = {"cudnn_wgrad": lambda: torch.nn.grad.conv3d_weight(x, (f, c, q, r, sw), dy, 1, s["pad"])}
    for form, (xi, wi, pad) in forms.items():
        calls[form] = (lambda xi=xi, wi=wi, pad=pad: conv3d.conv3d(xi, wi, None, 1, pad, target="sm90"))
    try:
        t = timing.Timer(10, 3, flush=True, device="cuda")
        times = t.interleaved(calls)
    except Exception as e:  # a form the kernels refuse, out of memory
        print(name, "failed:", type(e).__name__, str(e)[:300], flush=True)
        continue
    med = {k: statistics.median(v) for k, v in times.items()}
    gather = {"width": sw, "hw": r * sw}
    print(name, " ".join("%s %.3f ms" % (k, v) for k, v in med.items()),
          "| gather copies:", gather, "| input MB %.0f" % (x.numel() * 2 / 1e6), flush=True)
    del forms, calls, x, dy
    torch.cuda.empty_cache()
