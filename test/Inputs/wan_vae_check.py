#!/usr/bin/env python3
"""conv3d.models.wan_vae on the CPU (any PyTorch from 1.13 up).

    wan_vae_check.py structure   the module tree and parameter names of WAN 2.1's
                                 decoder, state-dict loading and its errors, the
                                 latent's errors (no convolution compiled)
    wan_vae_check.py numeric     Conv3dWanDecoder on the CPU target against the
                                 eager twin in float64 (f32 and bf16), fresh
                                 random weights and latents
    wan_vae_check.py dist        the height split over 2 gloo processes against
                                 the one-process decode; the world-size error
    wan_vae_check.py graphs      (a CUDA GPU) Conv3dWanDecoder(cuda_graphs=True)
                                 against the same decoder without graphs and
                                 the float32 eager decode: captures, replays,
                                 a parameter changed in place
"""

import os
import sys
import tempfile

import torch

from conv3d.models import wan_vae as W

SMALL = dict(dim=8, z_dim=4, dim_mult=(1, 2, 2, 2))


def randomize(model, seed):
    """Fresh random parameters (gammas around 1, the rest around 0)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            r = torch.randn(p.shape, generator=g, dtype=torch.float64)
            p.copy_(1.0 + 0.2 * r if name.endswith("gamma") else 0.3 * r)
    return model


class EmulatedGraphs:
    """A CUDA graph's semantics on the CPU, as a ChunkGraphs backend: the
    capture runs the step once (on whatever the graph's input buffers hold)
    and keeps its result tensors as the graph's outputs, then restores the
    cache buffers that existed before (a real capture computes nothing);
    each replay runs the step again and copies its results into those same
    tensors. What the bookkeeping gets wrong (a cache not copied in, a
    buffer overwritten before its last read, an output read after the next
    replay) shows as a wrong decode."""

    def __init__(self):
        self.owner = None  # the ChunkGraphs, for its cache buffers

    @staticmethod
    def applies(x):
        return True

    def capture(self, step, pool, device):
        saved = {k: v.clone() for k, v in self.owner._buffers.items()}
        result = step()
        for k, v in saved.items():
            self.owner._buffers[k].copy_(v)
        return (step, result), result

    @staticmethod
    def pool(graph):
        return None

    @staticmethod
    def replay(graph):
        step, (y, outputs) = graph
        fresh_y, fresh = step()
        y.copy_(fresh_y)
        for key, value in outputs.items():
            if isinstance(value, torch.Tensor) and value is not fresh[key]:
                value.copy_(fresh[key])


def error(what, fn):
    try:
        fn()
    except (TypeError, ValueError, ImportError) as e:
        print("%s: %s: %s" % (what, type(e).__name__, e))
    else:
        print("%s: no error" % what)


def structure():
    m = W.WanVAEDecoder()
    sd = m.state_dict()
    print("keys: %d, parameters: %d" % (len(sd), sum(v.numel() for v in sd.values())))
    for k in ("conv2.weight", "decoder.conv1.weight", "decoder.middle.0.residual.0.gamma",
              "decoder.middle.1.norm.gamma", "decoder.middle.1.to_qkv.weight",
              "decoder.middle.1.proj.weight", "decoder.upsamples.3.time_conv.weight",
              "decoder.upsamples.3.resample.1.weight", "decoder.upsamples.4.shortcut.weight",
              "decoder.upsamples.7.time_conv.weight", "decoder.upsamples.11.resample.1.weight",
              "decoder.upsamples.14.residual.6.weight", "decoder.head.0.gamma",
              "decoder.head.2.weight"):
        print("  %s %s" % (k, tuple(sd[k].shape)))
    modes = [u.mode for u in m.decoder.upsamples if isinstance(u, W.Resample)]
    print("upsamplings:", modes)
    print("output of a 1x16x21x90x160 latent:", m.output_shape((1, 16, 21, 90, 160)))

    # A state dict this test makes (as WanVAE_ saves it: with the encoder's
    # keys) into a fresh decoder.
    a, b = randomize(W.WanVAEDecoder(**SMALL), 1), W.WanVAEDecoder(**SMALL)
    full = dict(a.state_dict())
    full["encoder.conv1.weight"] = torch.zeros(1)
    full["conv1.bias"] = torch.zeros(1)
    b.load_wan_state_dict({k: v.double() for k, v in full.items()})
    same = all(torch.equal(x, y) for x, y in zip(a.state_dict().values(),
                                                  b.state_dict().values()))
    print("state dict loads: equal %s, dtype %s" % (same, b.conv2.weight.dtype))
    import importlib.util
    if importlib.util.find_spec("safetensors") is None:
        print("safetensors: not installed, file round trip skipped")
        error("load_safetensors without the package",
              lambda: W.load_safetensors("/nonexistent.safetensors"))
    else:
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "wan.safetensors")
            W.save_safetensors(a.state_dict(), path)
            c = W.WanVAEDecoder(**SMALL).load_wan_state_dict(W.load_safetensors(path))
            same = all(torch.equal(x, y) for x, y in zip(a.state_dict().values(),
                                                          c.state_dict().values()))
            print("safetensors: round trip equal %s" % same)
            print("load_safetensors without the package: skipped (installed)")

    sd = dict(a.state_dict())
    missing = dict(sd)
    del missing["decoder.head.2.bias"]
    error("missing", lambda: b.load_wan_state_dict(missing))
    bad = dict(sd)
    bad["decoder.conv1.weight"] = torch.zeros(2, 2, 3, 3, 3)
    error("misshapen", lambda: b.load_wan_state_dict(bad))
    extra = dict(sd)
    extra["decoder.bogus"] = torch.zeros(1)
    error("unexpected", lambda: b.load_wan_state_dict(extra))
    ints = dict(sd)
    ints["conv2.bias"] = torch.zeros(4, dtype=torch.int32)
    error("integer", lambda: b.load_wan_state_dict(ints))
    print("after the errors, unchanged: %s" % all(
        torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values())))

    d = W.Conv3dWanDecoder(b, target="cpu")
    z = torch.randn(1, 4, 2, 3, 3)
    error("rank 4 latent", lambda: d.decode(z[0]))
    error("5 channels", lambda: d.decode(torch.randn(1, 5, 2, 3, 3)))
    error("float64 latent", lambda: d.decode(z.double()))
    error("no frames", lambda: b.decode(z[:, :, :0]))
    error("a list", lambda: b.decode([1, 2]))
    error("mean of 3", lambda: d.decode(z, latents_mean=[0.0] * 3))
    error("not a decoder", lambda: W.Conv3dWanDecoder(torch.nn.Conv3d(1, 1, 1)))
    error("cuda_graphs='yes'", lambda: W.Conv3dWanDecoder(b, cuda_graphs="yes"))
    error("split_halo='pad'", lambda: W.Conv3dWanDecoder(b, split_halo="pad"))
    error("temporal_upsample of 2", lambda: W.WanVAEDecoder(temporal_upsample=(True, True)))


def rel(a, b):
    return ((a.double() - b.double()).norm() / b.double().norm()).item()


def numeric():
    torch.manual_seed(2)
    m = randomize(W.WanVAEDecoder(**SMALL), 3).eval()
    ref_model = randomize(W.WanVAEDecoder(**SMALL), 3).double().eval()
    z = torch.randn(1, 4, 3, 4, 5)
    mean, std = torch.randn(4).tolist(), (torch.rand(4) + 0.5).tolist()
    ref = ref_model.decode(z.double(), mean, std, clamp=False)
    ours = W.Conv3dWanDecoder(m, target="cpu")
    y = ours.decode(z, mean, std, clamp=False)
    eager = m.decode(z, mean, std, clamp=False)
    print("f32 shape %s: conv3d rel_l2 %s, eager f32 %s" % (
        tuple(y.shape), "OK" if rel(y, ref) < 1e-5 else "BAD %.2e" % rel(y, ref),
        "OK" if rel(eager, ref) < 1e-5 else "BAD %.2e" % rel(eager, ref)))
    # The upsamplings folded into their convolutions (transposed
    # convolutions: conv3d.upsample), against the same float64 reference.
    folded = W.Conv3dWanDecoder(m, target="cpu", fold_upsample=True)
    yf = folded.decode(z, mean, std, clamp=False)
    print("fold_upsample f32: rel_l2 %s, same shape %s" % (
        "OK" if rel(yf, ref) < 1e-5 else "BAD %.2e" % rel(yf, ref), yf.shape == y.shape))
    # cuda_graphs is ignored on the CPU: the same decode, nothing captured.
    graphed = W.Conv3dWanDecoder(m, target="cpu", cuda_graphs=True)
    yg = graphed.decode(z, mean, std, clamp=False)
    print("cuda_graphs on the CPU: equal %s, captures %d" % (torch.equal(yg, y),
                                                             graphed._graphs.captures))
    # The graphs' bookkeeping (models._chunk_graphs) with graphs emulated on
    # the CPU: 5 frames, 4 step shapes (the caches fill up), poisoned buffers
    # between decodes; each decode equal to the one without graphs.
    from conv3d.models._chunk_graphs import ChunkGraphs
    emulated = EmulatedGraphs()
    graphed._graphs = emulated.owner = ChunkGraphs(emulated)
    z5 = torch.randn(1, 4, 5, 4, 5)
    y5 = ours.decode(z5, mean, std, clamp=False)
    for i in range(3):
        before = (graphed._graphs.captures, graphed._graphs.replays)
        yg = graphed.decode(z5, mean, std, clamp=False)
        print("emulated graphs, decode %d: captured %d, replayed %d, equal %s" % (
            i + 1, graphed._graphs.captures - before[0], graphed._graphs.replays - before[1],
            torch.equal(yg, y5)))
        for t in graphed._graphs.buffers():
            t.fill_(float("nan"))
    # With the upsamplings folded (transposed convolutions in the steps).
    folded_graphs = W.Conv3dWanDecoder(m, target="cpu", cuda_graphs=True, fold_upsample=True)
    emulated = EmulatedGraphs()
    folded_graphs._graphs = emulated.owner = ChunkGraphs(emulated)
    yf5 = folded.decode(z5, mean, std, clamp=False)
    same = [torch.equal(folded_graphs.decode(z5, mean, std, clamp=False), yf5) for _ in range(3)]
    print("emulated graphs, fold_upsample: captured %d, replayed %d, equal %s" % (
        folded_graphs._graphs.captures, folded_graphs._graphs.replays, all(same)))
    clamped = ours.decode(z, mean, std)
    print("clamped: in [-1, 1] %s, equal to clamp(y) %s" % (
        bool(clamped.abs().max() <= 1), torch.equal(clamped, y.clamp(-1, 1))))
    # Changed in place, then moved to float64 and back (new storage): the
    # layers follow.
    with torch.no_grad():
        for p in m.parameters():
            p.mul_(0.9)
    y2 = ours.decode(z, mean, std, clamp=False)
    ref2 = m.double().decode(z.double(), mean, std, clamp=False)
    m.float()
    y3 = ours.decode(z, mean, std, clamp=False)
    print("after an in-place change: rel_l2 %s; after .double().float(): %s" % (
        "OK" if rel(y2, ref2) < 1e-5 else "BAD %.2e" % rel(y2, ref2),
        "OK" if rel(y3, ref2) < 1e-5 else "BAD %.2e" % rel(y3, ref2)))
    mb = randomize(W.WanVAEDecoder(**SMALL), 3).to(torch.bfloat16).eval()
    yb = W.Conv3dWanDecoder(mb, target="cpu").decode(z.bfloat16(), mean, std, clamp=False)
    eb = rel(mb.decode(z.bfloat16(), mean, std, clamp=False), ref)
    e = rel(yb, ref)
    print("bf16: conv3d within 2x of eager bf16's error: %s" % (
        "OK" if e < 2 * eb + 1e-3 else "BAD %.2e vs %.2e" % (e, eb)))
    ef = rel(W.Conv3dWanDecoder(mb, target="cpu", fold_upsample=True).decode(
        z.bfloat16(), mean, std, clamp=False), ref)
    print("bf16 fold_upsample: within 2x of eager bf16's error: %s" % (
        "OK" if ef < 2 * eb + 1e-3 else "BAD %.2e vs %.2e" % (ef, eb)))


def _worker(rank, size, port, queue):
    import torch.distributed as dist
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % port, rank=rank,
                            world_size=size)
    from conv3d.models._chunk_graphs import ChunkGraphs
    m = randomize(W.WanVAEDecoder(**SMALL), 5).eval()
    # The split bit for bit one process's: split_halo="copy"; "correct",
    # the default, within rounding.
    d = W.Conv3dWanDecoder(m, target="cpu", split_halo="copy")
    folded = W.Conv3dWanDecoder(m, target="cpu", fold_upsample=True, split_halo="copy")
    corrected = W.Conv3dWanDecoder(m, target="cpu")
    folded_corrected = W.Conv3dWanDecoder(m, target="cpu", fold_upsample=True)
    # Graphs (emulated) on every rank: the steps' exchanges pair up.
    graphed = W.Conv3dWanDecoder(m, target="cpu", cuda_graphs=True, split_halo="copy")
    emulated = EmulatedGraphs()
    graphed._graphs = emulated.owner = ChunkGraphs(emulated)
    out = {}
    for h in (5, 8):  # uneven (3 + 2 rows: a shard of two), even
        z = torch.randn(1, 4, 3, h, 6, generator=torch.Generator().manual_seed(h))
        # NumPy (pickled by value): a tensor would be shared with the parent
        # through this process, which may have exited when it is read.
        y = d.decode(z, clamp=False)
        z5 = torch.randn(1, 4, 5, h, 6, generator=torch.Generator().manual_seed(h + 10))
        y5 = d.decode(z5, clamp=False)
        graphs_equal = all(torch.equal(graphed.decode(z5, clamp=False), y5) for _ in range(3))
        out[h] = (y.numpy(), d.rows(z), folded.decode(z, clamp=False).numpy(), graphs_equal,
                  corrected.decode(z, clamp=False).numpy(),
                  folded_corrected.decode(z, clamp=False).numpy())
    try:
        d.decode(torch.randn(1, 4, 2, 3, 6))
    except ValueError as e:
        out["error"] = str(e)
    queue.put((rank, out))
    dist.barrier()
    dist.destroy_process_group()


def distributed():
    import torch.distributed as dist
    import torch.multiprocessing as mp
    if not dist.is_available():
        print("torch.distributed: not available, skipped")
        return
    m = randomize(W.WanVAEDecoder(**SMALL), 5).eval()
    d = W.Conv3dWanDecoder(m, target="cpu")
    folded = W.Conv3dWanDecoder(m, target="cpu", fold_upsample=True)
    one = {}
    for h in (5, 8):
        z = torch.randn(1, 4, 3, h, 6, generator=torch.Generator().manual_seed(h))
        y, yf = d.decode(z, clamp=False), folded.decode(z, clamp=False)
        one[h] = (y, m.double().decode(z.double(), clamp=False), yf)
        m.float()
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(r, 2, port, queue)) for r in range(2)]
    for p in procs:
        p.start()
    results = dict(queue.get(timeout=600) for _ in procs)
    for p in procs:
        p.join()
    for h in (5, 8):
        for r in range(2):
            y, rows, yf, graphs_equal, yc, yfc = results[r][h]
            y, yf = torch.from_numpy(y), torch.from_numpy(yf)
            print("H=%d rank %d rows %s: equal to one process %s, rel_l2 vs float64 %s" % (
                h, r, rows, torch.equal(y, one[h][0]),
                "OK" if rel(y, one[h][1]) < 1e-5 else "BAD"))
            # The folded upsamplings split: the rank's first and last rows
            # from slabs with the neighbours' rows.
            print("H=%d rank %d fold_upsample: equal to one process %s, rel_l2 vs float64 %s"
                  % (h, r, torch.equal(yf, one[h][2]),
                     "OK" if rel(yf, one[h][1]) < 1e-5 else "BAD %.2e" % rel(yf, one[h][1])))
    for h in (5, 8):
        for r in range(2):
            # The boundary rows' missing parts added after the convolution:
            # one more rounding there (float32), not bit for bit.
            yc = torch.from_numpy(results[r][h][4])
            e, e_one = rel(yc, one[h][1]), rel(one[h][0], one[h][1])
            print("H=%d rank %d split_halo='correct': rel_l2 vs one process %s, vs float64 "
                  "within 2x of the one-process decode's %s (%.1e, %.1e)"
                  % (h, r, "OK" if rel(yc, one[h][0]) < 1e-5 else "BAD %.2e" % rel(yc, one[h][0]),
                     "OK" if e <= 2 * e_one + 1e-7 else "BAD", e, e_one))
            yfc = torch.from_numpy(results[r][h][5])
            e = rel(yfc, one[h][1])
            print("H=%d rank %d split_halo='correct' with fold_upsample: rel_l2 vs one "
                  "process %s, vs float64 within 2x of the one-process decode's %s"
                  % (h, r, "OK" if rel(yfc, one[h][2]) < 1e-5
                     else "BAD %.2e" % rel(yfc, one[h][2]),
                     "OK" if e <= 2 * e_one + 1e-7 else "BAD"))
    for h in (5, 8):
        print("H=%d emulated graphs on both ranks: equal to the split without graphs %s"
              % (h, all(results[r][h][3] for r in range(2))))
    print("3 latent rows on 2 ranks: ValueError: %s" % results[0].get("error"))


def graphs():
    """The full-size decoder in bf16 on a small latent of 5 frames: frames
    0-3 each have their own shapes (the caches fill up: the first time
    convolution's cache holds one frame after frame 1), frame 4 repeats
    frame 3's, so the first decode captures one graph and replays it, the
    second captures the other three, the third only replays; a parameter
    changed in place drops the graphs (the decodes after it start over as
    the first two did). Each decode against
    the same decoder without graphs (equal up to the kernels' own run-to-run
    differences: none expected) and the float32 eager decode (the eager
    bf16 twin's error as the scale), on fresh random weights. The outputs
    are fresh tensors; the
    graphs' memory pool is poisoned (NaN) between decodes through the
    caches and the output they leave there."""
    import copy
    torch.manual_seed(4)
    dev = torch.device("cuda")
    # PyTorch's initialization (randomize's scale would overflow 384
    # channels), gammas around 1, the attention's output projection (zero
    # in WAN's initialization) random too.
    m = W.WanVAEDecoder().to(dev).eval()
    with torch.no_grad():
        for name, p in m.named_parameters():
            if name.endswith("gamma"):
                p.copy_(1 + 0.1 * torch.randn_like(p))
        torch.nn.init.kaiming_uniform_(m.decoder.middle[1].proj.weight, a=5 ** 0.5)
    mb = copy.deepcopy(m).to(torch.bfloat16)
    z = torch.randn(1, 16, 5, 8, 10, device=dev)
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    ref = m.decode(z, clamp=False)
    zb = z.bfloat16()
    scale = rel(mb.decode(zb, clamp=False), ref)
    plain = W.Conv3dWanDecoder(mb)
    graphed = W.Conv3dWanDecoder(mb, cuda_graphs=True)
    for label in ("decode 1", "decode 2", "decode 3", "after an in-place change",
                  "again after the change"):
        if label.startswith("after"):
            with torch.no_grad():  # the same storage, a new version
                for model in (m, mb):
                    for name, p in model.named_parameters():
                        if name.endswith("weight"):
                            p.mul_(0.9)
            ref = m.decode(z, clamp=False)
        expect = plain.decode(zb, clamp=False)
        before = (graphed._graphs.captures, graphed._graphs.replays)
        y = graphed.decode(zb, clamp=False)
        torch.cuda.synchronize()
        after = (graphed._graphs.captures, graphed._graphs.replays)
        e = rel(y.float(), ref)
        print("graphs %s: captured %d, replayed %d; equal to the decoder without graphs %s "
              "(rel_l2 %.1e); vs float32 %s" % (
                  label, after[0] - before[0], after[1] - before[1], torch.equal(y, expect),
                  rel(y.float(), expect.float()),
                  "OK" if e <= 2 * scale + 1e-3 else "BAD %.2e (eager bf16 %.2e)" % (e, scale)))
        # What a graph leaves in its pool (the caches, the last step's
        # output) must not leak into the next decode: poison it.
        for t in graphed._graphs.buffers():
            t.fill_(float("nan"))
    from conv3d.models._wan_conv3d import StageTimes
    timed = StageTimes(dev)
    graphed.decode(zb, clamp=False, timer=timed)
    print("with a timer: stages %s" % ", ".join(sorted(timed.totals())))


if __name__ == "__main__":
    {"structure": structure, "numeric": numeric, "dist": distributed,
     "graphs": graphs}[sys.argv[1]]()
    print("WAN-VAE-OK")
