"""WanVAEDecoder's decode on conv3d (Conv3dWanDecoder), on one device or with
the frames' height split over the ranks of a torch.distributed group.

Every convolution is a conv3d.torch.CausalConv3d sharing the model's
parameters (the 2-D convs as (1, R, S) ones), activations stay
channels_last_3d from the latent to the head, each RMS norm + SiLU is its
convolution's input prologue, each residual block's sum is its second
convolution's residual epilogue, each cache is the convolution's history
operand (and the next one comes out of the same library call's
return_cache). The attention's norm is its qkv projection's prologue, the
shortcut its output projection's residual. Between convolutions PyTorch
does: the nearest 2x upsampling (one copy, the time conv's channels-to-
frames rearrangement folded into it), scaled-dot-product attention, the
head's clamp into the output.

Height split (torch.distributed initialized with more than one rank): rank
r owns latent rows [s_r, s_r + c_r) (c_r = H // P or one more), and 2^k
times that after k upsamplings. The norms are per voxel, so local; a
convolution with a 3-row window needs one row from each neighbour: the
rows go by point-to-point isend/irecv (batch_isend_irecv) while x is copied
into a tensor with a row more on each side; the received rows (zeros at
the image's edges: the prologue maps zeros to zeros) go into those, and
one convolution without padding in H gives the rank's rows. Caches keep
one halo row on each side. The attention gathers
K and V of the whole frame (all_gather) and attends with the local rows'
queries: exact. The output's rows are gathered at the end (gather=True).
"""

import contextlib
import time

import torch
import torch.nn.functional as F

from .. import autograd, upsample
from .. import torch as ct
from . import wan_vae as W
from ._chunk_graphs import ChunkGraphs

NORM_EPS = 1e-12  # rsqrt(mean(x^2) + eps) for WAN's F.normalize (see wan_vae)
_CL = torch.channels_last_3d
_HEAD_FILTERS = 8  # the head's 3 filters padded to a 16-byte output row (bf16)


class StageTimes:
    """Time per stage (convolutions, norms, upsampling, attention,
    communication, other): CUDA events on the current stream (host clock on
    the CPU), summed by totals() after a synchronize."""

    def __init__(self, device):
        self.cuda = torch.device(device).type == "cuda"
        self.marks = []

    @contextlib.contextmanager
    def __call__(self, stage):
        if self.cuda:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(
                enable_timing=True)
            start.record()
            yield
            end.record()
            self.marks.append((stage, start, end))
        else:
            t0 = time.perf_counter()
            yield
            self.marks.append((stage, t0, time.perf_counter()))

    def totals(self):
        """{stage: milliseconds}."""
        if self.cuda:
            torch.cuda.synchronize()
        out = {}
        for stage, a, b in self.marks:
            ms = a.elapsed_time(b) if self.cuda else (b - a) * 1e3
            out[stage] = out.get(stage, 0.0) + ms
        return out


def _two_frames(v):
    """(N, T, H, W, 2C), a view of channels-last memory, as the view
    (N, T, 2, H, W, C): WAN's time conv puts frame 2t + k's channel c at
    channel k*C + c."""
    n, t, h, w, c2 = v.shape
    return v.reshape(n, t, h, w, 2, c2 // 2).permute(0, 1, 4, 2, 3, 5)


def _apply(layer, x, caches, key, residual, kwargs):
    """layer(x), with the cache protocol under caches[key] (key None: not
    causal in time, no cache)."""
    if key is None:
        return layer(x, residual=residual, **kwargs)
    y, caches[key] = layer(x, caches.get(key), residual=residual, return_cache=True,
                           **kwargs)
    return y


def _no_timer(stage):
    return contextlib.nullcontext()


class _Split:
    """The height split over a process group."""

    def __init__(self, group, latent_rows):
        import torch.distributed as dist
        self.dist, self.group = dist, group
        self.size = dist.get_world_size(group)
        self.rank = dist.get_rank(group)
        self.counts = [latent_rows // self.size + (r < latent_rows % self.size)
                       for r in range(self.size)]
        self.starts = [sum(self.counts[:r]) for r in range(self.size)]

    def peer(self, r):
        return self.dist.get_global_rank(self.group, r) if hasattr(
            self.dist, "get_global_rank") and self.group is not None else r

    def exchange(self, x):
        """Posts the exchange of x's first and last rows with the neighbours;
        returns a function that waits and gives (above, below): the row
        above x's first and below its last (zeros at the image's edges)."""
        # NDHWC-contiguous buffers (point-to-point takes contiguous tensors).
        top = x[:, :, :, :1].permute(0, 2, 3, 4, 1).contiguous()
        bottom = x[:, :, :, -1:].permute(0, 2, 3, 4, 1).contiguous()
        above, below = torch.zeros_like(top), torch.zeros_like(bottom)
        ops = []
        P2POp = self.dist.P2POp
        if self.rank > 0:
            peer = self.peer(self.rank - 1)
            ops += [P2POp(self.dist.irecv, above, peer, self.group),
                    P2POp(self.dist.isend, top, peer, self.group)]
        if self.rank < self.size - 1:
            peer = self.peer(self.rank + 1)
            ops += [P2POp(self.dist.isend, bottom, peer, self.group),
                    P2POp(self.dist.irecv, below, peer, self.group)]
        requests = self.dist.batch_isend_irecv(ops) if ops else []

        def wait(sent=(top, bottom)):  # the sent rows live until the wait
            for request in requests:
                request.wait()
            del sent
            return above.permute(0, 4, 1, 2, 3), below.permute(0, 4, 1, 2, 3)
        return wait

    def all_rows(self, x, scale):
        """x's rows from every rank, concatenated along H (dim 3): every
        rank's shard is padded to the largest for all_gather."""
        rows = [c * scale for c in self.counts]
        most = max(rows)
        if x.shape[3] < most:
            x = F.pad(x, (0, 0, 0, most - x.shape[3]))
        x = x.contiguous()
        parts = [torch.empty_like(x) for _ in range(self.size)]
        self.dist.all_gather(parts, x, group=self.group)
        return torch.cat([p[:, :, :, :r] for p, r in zip(parts, rows)], dim=3)


class Conv3dWanDecoder:
    """decode(z) of a WanVAEDecoder on conv3d.torch layers (see the module
    docstring). The parameters are the model's own (shared, not copied);
    conv3d's converted copies follow in-place changes. `target` as for
    conv3d.torch.CausalConv3d; `group`: a torch.distributed process group
    to split the height over (default: the whole world when
    torch.distributed is initialized with more than one rank, else none;
    False: never split). fold_upsample: each 2x upsampling and the 3x3
    convolution after it as one transposed convolution
    (conv3d.upsample.upsample_conv_weight: the upsampled tensor is never
    formed, 4 instead of 9 taps per output pixel), height split included;
    off by default: on the H100 it measured no faster (bench/RESULTS.md).
    cuda_graphs: on CUDA, each latent frame's decode step is captured as a
    CUDA graph the second time its shapes come (a decode's first frames
    and the steady state after them, across decode calls) and replayed
    from then on (models._chunk_graphs); the graphs keep their memory pool
    until refresh(). Ignored on the CPU and when decode is given a timer.
    With the height split the graphs hold NCCL work: refresh() before
    torch.distributed.destroy_process_group(). split_halo, how a rank's
    3-row convolutions get the neighbours' rows: "correct", the default
    (the convolution with zero padding while they travel, then the
    filter's outer row over each neighbour's row added to the boundary
    row: no copy of x, one more rounding of two rows), or "copy" (x copied
    into a tensor with a halo row on each side while they travel, one
    convolution over it: on the CPU target bit for bit the one-process
    decode). On 2 and 4 H200s, 720p, "correct" decoded 6-10% faster
    (bench/RESULTS.md)."""

    def __init__(self, model, target="auto", group=None, fold_upsample=False,
                 cuda_graphs=False, split_halo="correct"):
        if not isinstance(model, W.WanVAEDecoder):
            raise TypeError("Conv3dWanDecoder takes a WanVAEDecoder, got %s"
                            % type(model).__name__)
        for name, flag in (("fold_upsample", fold_upsample), ("cuda_graphs", cuda_graphs)):
            if not isinstance(flag, bool):
                raise TypeError("Conv3dWanDecoder: %s must be True or False, got %r"
                                % (name, flag))
        if split_halo not in ("copy", "correct"):
            raise ValueError("Conv3dWanDecoder: split_halo must be 'copy' or 'correct', got %r"
                             % (split_halo,))
        self.model = model
        self.target = target
        self.group = group
        self.split_halo = split_halo
        self.fold_upsample = fold_upsample
        self.cuda_graphs = cuda_graphs
        self._graphs = ChunkGraphs()
        self._layers = {}
        self._vectors = {}
        self.timer = _no_timer

    # -- layers ------------------------------------------------------------------
    def _layer(self, conv, split=False, row=None):
        """conv (a wan_vae.CausalConv3d or an nn.Conv2d) as a
        conv3d.torch.CausalConv3d on the same parameters; with split, no
        padding in H (the halo rows are explicit); with row r, only the
        filter's row r (a 1-row window, no bias: the part of a boundary
        row's output that the neighbour's row gives)."""
        key = (id(conv), split, row)
        head = conv is self.model.decoder.head[2]
        # Rebuilt when a parameter moves (model.to(), a new tensor): the
        # layer holds views of the parameters' storage (the head: copies,
        # also rebuilt when changed in place).
        state = tuple((t.data_ptr(), t.dtype, t.device, t._version if head else None)
                      for t in (conv.weight, conv.bias))
        hit = self._layers.get(key)
        if hit is not None and hit[1] == state:
            return hit[0]
        weight = conv.weight if conv.weight.dim() == 5 else conv.weight.unsqueeze(2)
        f, c, q, r, s = weight.shape
        p_t = conv.causal_padding[0] // 2 if hasattr(conv, "causal_padding") else 0
        p_h, p_w = (r - 1) // 2, (s - 1) // 2
        if head:
            weight, bias = self._head_parameters(conv)
        else:
            bias = conv.bias
        if row is not None:
            layer = ct.CausalConv3d(c, f, (q, 1, s), padding=(p_t, 0, p_w), bias=False,
                                    device="meta", target=self.target)
            weight = weight[:, :, :, row:row + 1]
        else:
            layer = ct.CausalConv3d(c, f, (q, r, s), padding=(p_t, 0 if split else p_h, p_w),
                                    device="meta", target=self.target)
            layer.bias = torch.nn.Parameter(bias.detach(), requires_grad=False)
        layer.weight = torch.nn.Parameter(weight.detach(), requires_grad=False)
        self._layers[key] = (layer, state)
        return layer

    def _head_parameters(self, conv):
        """The head's 3 filters padded with zero filters to _HEAD_FILTERS."""
        extra = _HEAD_FILTERS - conv.weight.shape[0]
        weight = torch.cat([conv.weight.detach(),
                            conv.weight.new_zeros((extra,) + conv.weight.shape[1:])])
        bias = torch.cat([conv.bias.detach(), conv.bias.new_zeros(extra)])
        return weight, bias

    def _gamma(self, norm):
        """The norm's gamma as a vector (a view sharing its storage)."""
        g = norm.gamma
        state = (g.data_ptr(), g.dtype, g.device)
        hit = self._vectors.get(id(norm))
        if hit is None or hit[1] != state:
            hit = self._vectors[id(norm)] = (g.detach().reshape(-1), state)
        return hit[0]

    def refresh(self):
        """Forgets the layers, their compiled plans and the CUDA graphs (the
        layers and graphs follow parameters changed in place or moved by
        themselves)."""
        self._layers.clear()
        self._vectors.clear()
        self._graphs.clear()

    def _parameter_state(self):
        """A token that changes when a parameter is replaced or changed in
        place (the CUDA graphs read the parameters they were captured with,
        and the head's padded copy is made outside them)."""
        return tuple((p.data_ptr(), p._version) for p in self.model.parameters())

    # -- one convolution ---------------------------------------------------------
    def _conv(self, conv, x, caches, norm=None, act=None, residual=None):
        """conv(prologue(x)) (+ residual), with the cache protocol when the
        conv is causal in time, split over the ranks when its window has 3
        rows and the height is split."""
        halo = self._split is not None and conv.weight.shape[-2] == 3
        gamma = self._gamma(norm) if norm is not None else None
        kwargs = dict(norm_weight=gamma, norm_eps=NORM_EPS, input_activation=act)
        causal = getattr(conv, "causal_padding", (0,))[0] > 0
        if halo:
            method = self._halo_conv if self.split_halo == "copy" else self._halo_correct
            return method(conv, x, caches, causal, residual, kwargs)
        with self.timer("convolutions"):
            return _apply(self._layer(conv), x, caches, id(conv) if causal else None,
                          residual, kwargs)

    def _halo_conv(self, conv, x, caches, causal, residual, kwargs):
        """conv of x's rows on a rank of the split: x copied into a tensor
        with one more row on each side while the neighbours' rows travel,
        those rows put in, then one convolution without padding in H over
        it, with the whole residual and cache (which keeps the halo rows).
        The copy of x costs what joining the interior's and the boundary
        rows' outputs cost, and saves the boundary rows' own convolutions
        and the residual's and cache's row slices (copies each)."""
        layer = self._layer(conv, split=True)
        with self.timer("communication"):
            wait = self._split.exchange(x)
        with self.timer("convolutions"):
            n, c, d, h, w = x.shape
            padded = torch.empty((n, c, d, h + 2, w), dtype=x.dtype, device=x.device,
                                 memory_format=_CL)
            padded[:, :, :, 1:h + 1] = x
        with self.timer("communication"):
            above, below = wait()
        with self.timer("convolutions"):
            padded[:, :, :, :1] = above
            padded[:, :, :, h + 1:] = below
            return _apply(layer, padded, caches, id(conv) if causal else None, residual,
                          kwargs)

    def _halo_correct(self, conv, x, caches, causal, residual, kwargs):
        """conv of x's rows on a rank of the split, split_halo="correct":
        the convolution with zero padding in H while the neighbours' rows
        travel, then each boundary row's missing part, the filter's outer
        row over the neighbour's row (a 1-row convolution with its own
        cache), added in place. The convolution is linear in its prologued
        input and WAN's have no output activation, so the sum is the
        convolution of the joined rows, up to one more rounding of the two
        boundary rows; x is never copied."""
        layer = self._layer(conv)
        with self.timer("communication"):
            wait = self._split.exchange(x)
        with self.timer("convolutions"):
            y = _apply(layer, x, caches, id(conv) if causal else None, residual, kwargs)
        with self.timer("communication"):
            above, below = wait()
        with self.timer("convolutions"):
            last = y.shape[3] - 1
            # (filter row, the neighbour's row, the output row it reaches); at
            # the image's edges the padding's zeros add nothing.
            for row, rows, out, present in ((0, above, 0, self._split.rank > 0),
                                            (2, below, last,
                                             self._split.rank < self._split.size - 1)):
                if not present:
                    continue
                y[:, :, :, out:out + 1] += _apply(self._layer(conv, row=row), rows, caches,
                                                  (id(conv), row) if causal else None, None,
                                                  kwargs)
            return y

    # -- blocks ------------------------------------------------------------------
    def _residual_block(self, block, x, caches):
        norm1, conv1, norm2, conv2 = block.convs
        shortcut = x if block.in_dim == block.out_dim else self._conv(block.shortcut, x, caches)
        h = self._conv(conv1, x, caches, norm=norm1, act="silu")
        return self._conv(conv2, h, caches, norm=norm2, act="silu", residual=shortcut)

    def _attention(self, block, x, caches):
        qkv = self._conv(block.to_qkv, x, caches, norm=block.norm)
        n, c3, t, h, w = qkv.shape
        c = c3 // 3
        tokens = qkv.permute(0, 2, 3, 4, 1).reshape(n * t, 1, h * w, c3)
        q, kv = tokens[..., :c], tokens[..., c:]
        if self._split is not None:  # K and V of the whole frame
            with self.timer("communication"):
                full = self._split.all_rows(
                    kv.reshape(n * t, h, w, 2 * c).permute(0, 3, 1, 2).unsqueeze(0),
                    self._scale)
            kv = full.squeeze(0).permute(0, 2, 3, 1).reshape(n * t, 1, -1, 2 * c)
        with self.timer("attention"):
            o = W.attention(q, kv[..., :c], kv[..., c:])
            o = o.reshape(n, t, h, w, c).permute(0, 4, 1, 2, 3)
        return self._conv(block.proj, o, caches, residual=x)

    def _upsample(self, x, frames_in_channels):
        """Nearest 2x in H and W, channels_last_3d in and out, one copy; with
        frames_in_channels, x's 2C channels are two frames (WAN's time
        conv: channel k*C + c is frame 2t + k's channel c)."""
        with self.timer("upsampling"):
            n, c, t, h, w = x.shape
            v = x.permute(0, 2, 3, 4, 1)  # (N, T, H, W, C): a view of channels-last memory
            if frames_in_channels:
                c //= 2
                v = _two_frames(v)[:, :, :, :, None, :, None, :].expand(n, t, 2, h, 2, w, 2, c)
                t *= 2
            else:
                v = v[:, :, :, None, :, None, :].expand(n, t, h, 2, w, 2, c)
            return v.reshape(n, t, 2 * h, 2 * w, c).permute(0, 4, 1, 2, 3)

    def _frames_from_channels(self, x):
        """WAN's time conv output (N, 2C, T, H, W) as (N, C, 2T, H, W),
        channels_last_3d (the rearrangement _upsample folds into its copy)."""
        with self.timer("upsampling"):
            n, c2, t, h, w = x.shape
            v = _two_frames(x.permute(0, 2, 3, 4, 1)).reshape(n, 2 * t, h, w, c2 // 2)
            return v.permute(0, 4, 1, 2, 3)

    def _folded(self, conv):
        """conv (an nn.Conv2d) after a 2x upsampling in H and W as a
        transposed convolution: (weight, bias, stride, padding), the filter
        made once per parameter state."""
        key = ("upsample", id(conv))
        state = tuple((t.data_ptr(), t.dtype, t.device, t._version)
                      for t in (conv.weight, conv.bias) if t is not None)
        hit = self._layers.get(key)
        if hit is None or hit[1] != state:
            weight_t, stride, padding_t = upsample.upsample_conv_weight(
                conv.weight.detach().unsqueeze(2), (1, 2, 2), (0,) + tuple(conv.padding))
            bias = conv.bias.detach() if conv.bias is not None else None
            hit = self._layers[key] = ((weight_t, bias, stride, padding_t), state)
        return hit[0]

    def _upsample_conv(self, conv, x):
        """conv (WAN's 3x3, padding 1) of x upsampled 2x in H and W, as one
        transposed convolution of x. Split over ranks: output rows 2i - 1 to
        2i + 2 read input row i, so all but a rank's first and last output
        rows come from its own rows (computed while the neighbours' rows
        travel); those two come from 2-row slabs with the neighbour's row,
        the same inputs and taps as in one process."""
        weight_t, bias, stride, (p_d, p_h, p_w) = self._folded(conv)

        def transposed(t, pad_h):
            return autograd.conv_transpose3d(
                t, weight_t, bias, stride=stride, padding=(p_d, p_d, pad_h, pad_h, p_w, p_w),
                target=self.target)
        if self._split is None:
            with self.timer("convolutions"):
                return transposed(x, p_h)
        with self.timer("communication"):
            wait = self._split.exchange(x)
        h = x.shape[3]
        with self.timer("convolutions"):
            middle = transposed(x, p_h)[:, :, :, 1:2 * h - 1]
        with self.timer("communication"):
            above, below = wait()
        with self.timer("convolutions"):
            # Without padding in H, slab row j's taps land on output rows
            # 2j .. 2j + 3, global row 2(first) - 1 + that: the rank's first
            # output row is row 3 of [above, x0], its last row 2 of
            # [x_last, below].
            top = transposed(torch.cat([above, x[:, :, :, :1]], dim=3), 0)[:, :, :, 3:4]
            bottom = transposed(torch.cat([x[:, :, :, h - 1:], below], dim=3), 0)[:, :, :, 2:3]
            return torch.cat([top, middle, bottom], dim=3).contiguous(memory_format=_CL)

    def _resample(self, block, x, caches):
        doubled = False
        if block.mode == "upsample3d":
            key = id(block.time_conv)
            if key not in caches:
                caches[key] = W._REPEAT  # first chunk: no time conv
            else:
                if caches[key] is W._REPEAT:
                    del caches[key]  # the second chunk starts the time conv's sequence
                x = self._conv(block.time_conv, x, caches)
                doubled = True
        conv = block.resample[1]
        if self.fold_upsample and tuple(conv.kernel_size) == (3, 3) \
                and tuple(conv.padding) == (1, 1) and tuple(conv.stride) == (1, 1):
            if doubled:
                x = self._frames_from_channels(x)
            y = self._upsample_conv(conv, x)
            self._scale *= 2
            return y
        x = self._upsample(x, doubled)
        self._scale *= 2
        return self._conv(block.resample[1], x, caches)

    def _step(self, z_frame, caches):
        """One latent frame's decode: conv2 (1x1x1, frame by frame: the same
        result as over the whole latent, and the same compiled shape for
        every length), then the decoder."""
        self._scale = 1
        return self._chunk(self._conv(self.model.conv2, z_frame, caches), caches)

    def _chunk(self, x, caches):
        d = self.model.decoder
        x = self._conv(d.conv1, x, caches)
        for layer in d.middle:
            x = (self._residual_block if isinstance(layer, W.ResidualBlock)
                 else self._attention)(layer, x, caches)
        for layer in d.upsamples:
            x = (self._residual_block if isinstance(layer, W.ResidualBlock)
                 else self._resample)(layer, x, caches)
        return self._conv(d.head[2], x, caches, norm=d.head[0], act="silu")

    # -- decode ------------------------------------------------------------------
    def _group(self):
        if self.group is False:
            return None
        if self.group is not None:
            return self.group
        dist = getattr(torch, "distributed", None)
        if dist is None or not dist.is_available() or not dist.is_initialized():
            return None
        return dist.group.WORLD if dist.get_world_size() > 1 else None

    def check(self, z, latents_mean=None, latents_std=None):
        """The model's latent checks, and the split's: every rank needs at
        least 2 latent rows. Raises before any work."""
        self.model.check_latent(z, latents_mean, latents_std)
        group = self._group()
        if group is not None:
            import torch.distributed as dist
            size = dist.get_world_size(group)
            if z.shape[3] // size < 2:
                raise ValueError(
                    "a world of %d ranks cannot split the latent's %d rows into shards of 2 "
                    "rows or more (each rank's convolutions need 2 rows of their own): use "
                    "at most %d" % (size, z.shape[3], max(1, z.shape[3] // 2)))
            if z.device.type == "cuda" and z.device.index != torch.cuda.current_device():
                raise ValueError("the latent is on %s, this rank's current CUDA device is %d"
                                 % (z.device, torch.cuda.current_device()))
        return group

    @torch.no_grad()
    def decode(self, z, latents_mean=None, latents_std=None, clamp=True, gather=True,
               timer=None):
        """The video of latent z (as WanVAEDecoder.decode). Split over ranks,
        every rank passes the whole latent; with gather=True every rank gets
        the whole video, else its own rows (rows() says which). `timer`: a
        StageTimes to fill (the steps then run eagerly, without CUDA
        graphs)."""
        group = self.check(z, latents_mean, latents_std)
        self.timer = timer or _no_timer
        self._split = _Split(group, z.shape[3]) if group is not None else None
        self._scale = 1
        try:
            z = self.model._denormalize(z, latents_mean, latents_std)
            if self._split is not None:
                s = self._split
                z = z[:, :, :, s.starts[s.rank]:s.starts[s.rank] + s.counts[s.rank]]
            z = z.contiguous(memory_format=_CL)
            n, _, t, h, w = z.shape
            up = self.model.space_factor
            out = torch.empty(n, 3, 1 + self.model.time_factor * (t - 1), up * h, up * w,
                              dtype=z.dtype, device=z.device)
            caches, frame = {}, 0
            graphs = self.cuda_graphs and timer is None  # (_graphs: CUDA tensors only)
            state = self._parameter_state() if graphs else None
            for i in range(t):
                if graphs:
                    y = self._graphs.run(self._step, z[:, :, i:i + 1], caches, state)
                else:
                    y = self._step(z[:, :, i:i + 1], caches)
                with self.timer("other"):
                    y = y[:, :3]
                    out[:, :, frame:frame + y.shape[2]] = y.clamp(-1.0, 1.0) if clamp else y
                frame += y.shape[2]
            if self._split is not None and gather:
                with self.timer("communication"):
                    out = self._split.all_rows(out, up)
            return out
        finally:
            self.timer = _no_timer
            self._split = None

    def rows(self, z):
        """(first, count): the output rows this rank computes for latent z."""
        group = self._group()
        if group is None:
            return 0, self.model.space_factor * z.shape[3]
        s = _Split(group, z.shape[3])
        f = self.model.space_factor
        return f * s.starts[s.rank], f * s.counts[s.rank]
