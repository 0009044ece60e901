"""The WAN 2.1 causal video VAE decoder: the architecture, its eager PyTorch
twin (the reference), state-dict loading and the input checks.

    from conv3d.models import wan_vae
    model = wan_vae.WanVAEDecoder().to("cuda", torch.bfloat16).eval()
    model.load_wan_state_dict(wan_vae.load_safetensors("Wan2.1_VAE.safetensors"))
    video = model.decode(z)                               # eager PyTorch + cuDNN
    video = wan_vae.Conv3dWanDecoder(model).decode(z)     # the same on conv3d

Written from the published architecture (Wan-Video/Wan2.1, wan/modules/vae.py;
diffusers' AutoencoderKLWan): the module tree and parameter names are the
original's (`conv2.*` and `decoder.*` of WanVAE_), so its state dict loads
as it is (the encoder's `encoder.*` and `conv1.*` are ignored).

Decoding (WanVAE_.decode): the latent (N, 16, T, H, W) is un-normalized
(z * std + mean, when given), goes through `conv2` (1x1x1) as a whole, then
through the decoder one latent frame at a time; each causal convolution
keeps the last CACHE_T = 2 frames of its input as the next chunk's cache
(a one-frame chunk keeps the previous cache's last frame in front of its
own). The decoder: conv1 (16 -> 384, 3x3x3), a middle of residual block,
attention block (single-head self-attention over each frame's H*W
positions), residual block; four stages of three residual blocks (RMS norm,
SiLU, causal 3x3x3 conv, RMS norm, SiLU, conv, plus the shortcut, a 1x1x1
conv where the channel count changes), the first three followed by an
upsampling (2-D nearest x2 and a 3x3 conv halving the channels; the first
two also double the frames with a (3,1,1) time conv giving 2C channels that
become two frames each, skipped on the first chunk); the head (RMS norm,
SiLU, conv 96 -> 3). A latent of T frames gives 1 + 4 (T - 1) frames of 8H
x 8W pixels, clamped to [-1, 1].

The RMS norm is WAN's F.normalize(x, dim=1) * sqrt(C) * gamma: per voxel
over the channels, x * rsqrt(mean_c(x^2)) * gamma (F.normalize's 1e-12
floor on the norm only matters for all-zero voxels).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

__all__ = ["WanVAEDecoder", "Conv3dWanDecoder", "CausalConv3d", "RMSNorm", "ResidualBlock",
           "AttentionBlock", "Resample", "Decoder3d", "load_safetensors", "save_safetensors",
           "WAN21_LATENTS_MEAN", "WAN21_LATENTS_STD", "CACHE_T", "output_shape"]

CACHE_T = 2

# WAN 2.1's per-channel latent statistics (WanVAE's mean and std).
WAN21_LATENTS_MEAN = (-0.7571, -0.7089, -0.9113, 0.1075, -0.1745, 0.9653, -0.1517, 1.5508,
                      0.4134, -0.0715, 0.5517, -0.3632, -0.1922, -0.9497, 0.2503, -0.2921)
WAN21_LATENTS_STD = (2.8184, 1.4541, 2.3275, 2.6558, 1.2196, 1.7708, 2.6052, 2.0743,
                     3.2687, 2.1526, 2.8652, 1.5579, 1.6382, 1.1253, 2.8251, 1.9160)

_REPEAT = "first chunk"  # an upsample3d's cache after a chunk without time conv


class CausalConv3d(nn.Conv3d):
    """nn.Conv3d that is causal in time: padding (p_t, p_h, p_w) pads 2*p_t
    frames before the input, none after. eager(x, cache) concatenates the
    cache in front of x and pads what is left, as WAN does."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0):
        super().__init__(in_channels, out_channels, kernel_size, stride, 0)
        p = (padding,) * 3 if isinstance(padding, int) else tuple(padding)
        self.causal_padding = (2 * p[0], p[1], p[2])

    def eager(self, x, cache=None):
        front, p_h, p_w = self.causal_padding
        if cache is not None and front > 0:
            x = torch.cat([cache.to(x.dtype), x], dim=2)
            front -= cache.shape[2]
        return self.forward(F.pad(x, (p_w, p_w, p_h, p_h, front, 0)))


class RMSNorm(nn.Module):
    """WAN's RMS_norm without bias: gamma of shape (C, 1, 1, 1) for videos,
    (C, 1, 1) for images (the attention block's)."""

    def __init__(self, dim, images=False):
        super().__init__()
        self.dim = dim
        self.gamma = nn.Parameter(torch.ones((dim, 1, 1) if images else (dim, 1, 1, 1)))

    def forward(self, x):
        return F.normalize(x, dim=1) * (self.dim ** 0.5) * self.gamma


class ResidualBlock(nn.Module):
    def __init__(self, in_dim, out_dim, dropout=0.0):
        super().__init__()
        self.in_dim, self.out_dim = in_dim, out_dim
        self.residual = nn.Sequential(
            RMSNorm(in_dim), nn.SiLU(), CausalConv3d(in_dim, out_dim, 3, padding=1),
            RMSNorm(out_dim), nn.SiLU(), nn.Dropout(dropout),
            CausalConv3d(out_dim, out_dim, 3, padding=1))
        self.shortcut = CausalConv3d(in_dim, out_dim, 1) if in_dim != out_dim else nn.Identity()

    @property
    def convs(self):
        """(norm1, conv1, norm2, conv2)."""
        r = self.residual
        return r[0], r[2], r[3], r[6]

    def eager(self, x, caches):
        h = self.shortcut(x)
        for layer in self.residual:
            if isinstance(layer, CausalConv3d):
                x = _cached_conv(layer, x, caches)
            elif not isinstance(layer, nn.Dropout):
                x = layer(x)
        return x + h


class AttentionBlock(nn.Module):
    """Single-head self-attention over each frame's positions."""

    def __init__(self, dim):
        super().__init__()
        self.dim = dim
        self.norm = RMSNorm(dim, images=True)
        self.to_qkv = nn.Conv2d(dim, dim * 3, 1)
        self.proj = nn.Conv2d(dim, dim, 1)
        nn.init.zeros_(self.proj.weight)

    def eager(self, x):
        identity = x
        n, c, t, h, w = x.shape
        x = x.transpose(1, 2).reshape(n * t, c, h, w)
        qkv = self.to_qkv(self.norm(x))
        q, k, v = qkv.reshape(n * t, 1, 3 * c, h * w).transpose(2, 3).contiguous().chunk(3, -1)
        x = attention(q, k, v)
        x = self.proj(x.squeeze(1).transpose(1, 2).reshape(n * t, c, h, w))
        return x.reshape(n, t, c, h, w).transpose(1, 2) + identity


def attention(q, k, v):
    """softmax(q k^T / sqrt(d)) v: PyTorch's scaled_dot_product_attention
    (2.0 and up), else the same in plain operations."""
    sdpa = getattr(F, "scaled_dot_product_attention", None)
    if sdpa is not None:
        return sdpa(q, k, v)
    scores = torch.matmul(q, k.transpose(-2, -1)) * (q.shape[-1] ** -0.5)
    return torch.matmul(scores.softmax(dim=-1), v)


class Resample(nn.Module):
    """WAN's upsampling: nearest x2 in H and W and a 3x3 conv to dim // 2
    channels per frame; 'upsample3d' first doubles the frames with a causal
    (3, 1, 1) conv to 2 * dim channels (frames 2t and 2t+1 are its two
    halves), skipped on the first chunk."""

    def __init__(self, dim, mode):
        super().__init__()
        if mode not in ("upsample2d", "upsample3d"):
            raise ValueError("Resample: mode must be upsample2d or upsample3d, got %r" % (mode,))
        self.dim, self.mode = dim, mode
        self.resample = nn.Sequential(nn.Upsample(scale_factor=(2.0, 2.0), mode="nearest"),
                                      nn.Conv2d(dim, dim // 2, 3, padding=1))
        if mode == "upsample3d":
            self.time_conv = CausalConv3d(dim, dim * 2, (3, 1, 1), padding=(1, 0, 0))

    def eager(self, x, caches):
        if self.mode == "upsample3d":
            old = caches.get(id(self.time_conv))
            if old is None:
                caches[id(self.time_conv)] = _REPEAT
            else:
                keep = x[:, :, -CACHE_T:].clone()
                if keep.shape[2] < CACHE_T:
                    front = torch.zeros_like(keep) if old is _REPEAT else old[:, :, -1:]
                    keep = torch.cat([front, keep], dim=2)
                x = self.time_conv.eager(x, None if old is _REPEAT else old)
                caches[id(self.time_conv)] = keep
                n, c2, t, h, w = x.shape
                x = x.reshape(n, 2, c2 // 2, t, h, w).permute(0, 2, 3, 1, 4, 5).reshape(
                    n, c2 // 2, 2 * t, h, w)
        n, c, t, h, w = x.shape
        frames = x.transpose(1, 2).reshape(n * t, c, h, w)
        # Nearest upsampling in float32, as WAN does (bf16 support).
        frames = self.resample[0](frames.float()).to(x.dtype)
        frames = self.resample[1](frames)
        return frames.reshape(n, t, *frames.shape[1:]).transpose(1, 2)


class Decoder3d(nn.Module):
    def __init__(self, dim=96, z_dim=16, dim_mult=(1, 2, 4, 4), num_res_blocks=2,
                 temporal_upsample=(True, True, False), dropout=0.0):
        super().__init__()
        dims = [dim * u for u in [dim_mult[-1]] + list(dim_mult[::-1])]
        self.conv1 = CausalConv3d(z_dim, dims[0], 3, padding=1)
        self.middle = nn.Sequential(ResidualBlock(dims[0], dims[0], dropout),
                                    AttentionBlock(dims[0]),
                                    ResidualBlock(dims[0], dims[0], dropout))
        ups = []
        for i, (in_dim, out_dim) in enumerate(zip(dims[:-1], dims[1:])):
            if i > 0:
                in_dim //= 2  # the previous stage's upsampling halved the channels
            for _ in range(num_res_blocks + 1):
                ups.append(ResidualBlock(in_dim, out_dim, dropout))
                in_dim = out_dim
            if i != len(dim_mult) - 1:
                ups.append(Resample(out_dim, "upsample3d" if temporal_upsample[i]
                                    else "upsample2d"))
        self.upsamples = nn.Sequential(*ups)
        self.head = nn.Sequential(RMSNorm(dims[-1]), nn.SiLU(),
                                  CausalConv3d(dims[-1], 3, 3, padding=1))

    def eager(self, x, caches):
        x = _cached_conv(self.conv1, x, caches)
        for layer in self.middle:
            x = layer.eager(x, caches) if isinstance(layer, ResidualBlock) else layer.eager(x)
        for layer in self.upsamples:
            x = layer.eager(x, caches)
        x = F.silu(self.head[0](x))
        return _cached_conv(self.head[2], x, caches)


def _cached_conv(conv, x, caches):
    """WAN's cache protocol around one causal conv: the conv sees the old
    cache in front of x; the new cache is x's last CACHE_T frames (with the
    old cache's last frame in front when x has fewer)."""
    old = caches.get(id(conv))
    keep = x[:, :, -CACHE_T:].clone()
    if keep.shape[2] < CACHE_T and old is not None:
        keep = torch.cat([old[:, :, -1:].to(keep.dtype), keep], dim=2)
    y = conv.eager(x, old)
    caches[id(conv)] = keep
    return y


def output_shape(latent_shape, upsample_factor=8):
    """(N, 3, 1 + 4 (T - 1), 8 H, 8 W) for a latent (N, C, T, H, W) (WAN 2.1:
    two time doublings, three spatial)."""
    n, _, t, h, w = latent_shape
    return (n, 3, 1 + 4 * (t - 1), upsample_factor * h, upsample_factor * w)


class WanVAEDecoder(nn.Module):
    """WanVAE_'s decoding half: `conv2` (1x1x1 on the latent) and `decoder`
    (Decoder3d), with the original parameter names. decode() is the eager
    PyTorch twin (cuDNN on CUDA, caches concatenated and padded as WAN does
    it), the reference for Conv3dWanDecoder."""

    def __init__(self, dim=96, z_dim=16, dim_mult=(1, 2, 4, 4), num_res_blocks=2,
                 temporal_upsample=(True, True, False), dropout=0.0):
        super().__init__()
        if len(temporal_upsample) != len(dim_mult) - 1:
            raise ValueError("temporal_upsample needs %d values (one per upsampling), got %d"
                             % (len(dim_mult) - 1, len(temporal_upsample)))
        self.z_dim = z_dim
        self.time_factor = 2 ** sum(bool(u) for u in temporal_upsample)
        self.space_factor = 2 ** (len(dim_mult) - 1)
        self.conv2 = CausalConv3d(z_dim, z_dim, 1)
        self.decoder = Decoder3d(dim, z_dim, dim_mult, num_res_blocks, temporal_upsample,
                                 dropout)

    def output_shape(self, latent_shape):
        n, _, t, h, w = latent_shape
        return (n, 3, 1 + self.time_factor * (t - 1), self.space_factor * h,
                self.space_factor * w)

    # -- checks ------------------------------------------------------------------
    def check_latent(self, z, latents_mean=None, latents_std=None):
        """ValueError/TypeError naming what is wrong with a latent, before any
        work: a 5-D floating tensor (N, z_dim, T >= 1, H >= 1, W >= 1) of the
        decoder's dtype on its device; mean and std of z_dim values."""
        p = self.conv2.weight
        if not isinstance(z, torch.Tensor):
            raise TypeError("the latent must be a torch.Tensor, got %s" % type(z).__name__)
        if z.dim() != 5:
            raise ValueError("the latent must be (N, %d, T, H, W), got shape %s"
                             % (self.z_dim, tuple(z.shape)))
        if z.shape[1] != self.z_dim:
            raise ValueError("the latent has %d channels (shape %s); this decoder takes "
                             "z_dim=%d" % (z.shape[1], tuple(z.shape), self.z_dim))
        if min(z.shape) < 1:
            raise ValueError("the latent has an empty dimension: shape %s" % (tuple(z.shape),))
        if z.dtype != p.dtype:
            raise TypeError("the latent has dtype %s, the decoder's parameters %s: convert "
                            "one of them" % (z.dtype, p.dtype))
        if z.device != p.device:
            raise ValueError("the latent is on %s, the decoder on %s" % (z.device, p.device))
        for name, v in (("latents_mean", latents_mean), ("latents_std", latents_std)):
            if v is not None and len(v) != self.z_dim:
                raise ValueError("%s has %d values; the latent has %d channels"
                                 % (name, len(v), self.z_dim))

    def _denormalize(self, z, latents_mean, latents_std):
        shape = (1, self.z_dim, 1, 1, 1)
        if latents_std is not None:
            z = z * torch.as_tensor(latents_std, dtype=z.dtype, device=z.device).view(shape)
        if latents_mean is not None:
            z = z + torch.as_tensor(latents_mean, dtype=z.dtype, device=z.device).view(shape)
        return z

    # -- the eager twin ----------------------------------------------------------
    @torch.no_grad()
    def decode(self, z, latents_mean=None, latents_std=None, clamp=True):
        """The video (N, 3, 1 + 4 (T - 1), 8 H, 8 W) of latent z, in eager
        PyTorch, one latent frame per chunk as WAN decodes."""
        self.check_latent(z, latents_mean, latents_std)
        x = self.conv2.eager(self._denormalize(z, latents_mean, latents_std))
        caches, outs = {}, []
        for t in range(x.shape[2]):
            outs.append(self.decoder.eager(x[:, :, t:t + 1], caches))
        out = torch.cat(outs, dim=2)
        return out.clamp(-1.0, 1.0) if clamp else out

    # -- weights -----------------------------------------------------------------
    def load_wan_state_dict(self, state_dict):
        """Loads WAN's state dict (a whole WanVAE_'s, or the decoder's part:
        `conv2.*`, `decoder.*`; `encoder.*` and `conv1.*` are the encoder's
        and ignored), converting dtypes to the decoder's. ValueError listing
        missing, unexpected or misshapen parameters, before anything is
        copied."""
        own = self.state_dict()
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own
                      and not k.startswith(("encoder.", "conv1."))]
        shapes = ["%s: %s in the file, %s in the decoder" % (k, tuple(state_dict[k].shape),
                                                              tuple(v.shape))
                  for k, v in own.items()
                  if k in state_dict and tuple(state_dict[k].shape) != tuple(v.shape)]
        problems = []
        for what, names in (("missing", missing), ("unexpected", unexpected),
                            ("misshapen", shapes)):
            if names:
                shown = ", ".join(names[:6]) + (", ..." if len(names) > 6 else "")
                problems.append("%d %s (%s)" % (len(names), what, shown))
        if problems:
            raise ValueError("WAN VAE state dict: " + "; ".join(problems))
        for k, v in state_dict.items():
            if k in own and not torch.is_floating_point(v):
                raise TypeError("WAN VAE state dict: %s has dtype %s, not floating point"
                                % (k, v.dtype))
        with torch.no_grad():
            for k, v in own.items():
                v.copy_(state_dict[k])
        return self


def load_safetensors(path, device="cpu"):
    """A state dict from a safetensors file (the `safetensors` package)."""
    try:
        from safetensors.torch import load_file
    except ImportError as error:
        raise ImportError("loading %s needs the safetensors package (pip install "
                          "safetensors); or pass a state dict to load_wan_state_dict"
                          % path) from error
    return load_file(path, device=str(device))


def save_safetensors(state_dict, path):
    """Writes a state dict as a safetensors file (the `safetensors` package)."""
    try:
        from safetensors.torch import save_file
    except ImportError as error:
        raise ImportError("writing %s needs the safetensors package (pip install "
                          "safetensors)" % path) from error
    save_file({k: v.contiguous() for k, v in state_dict.items()}, path)


# Last: _wan_conv3d imports this module.
from ._wan_conv3d import Conv3dWanDecoder  # noqa: E402
