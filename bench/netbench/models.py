"""The networks of the benchmark and their dense convolution layers.

- torchvision's video models (r3d_18, mc3_18, r2plus1d_18, s3d, swin3d_t,
  mvit_v2_s), untrained: the layers are read by forward hooks on a real
  forward pass (on the meta device where its operators exist, else on the
  given device), so each Conv3d is recorded with the input it is called on.
- A 3-D U-Net in nnU-Net's 3d_fullres configuration (PlainConvUNet: 6
  stages of 32-64-128-256-320-320 channels, two 3x3x3 conv + instance norm
  + leaky ReLU per stage, strided convolutions down, transposed
  convolutions up, a 1x1x1 segmentation head), built here.
- WAN 2.1's video VAE decoder (Decoder3d: dim 96, multipliers 1-2-4-4, 2
  residual blocks a stage + 1, temporal upsampling in the first two
  stages), as the layer list of one chunk of its causal decode: the latent
  is decoded a frame at a time, each causal conv reading two cached frames
  in front of its input (so pad_d = 0 and D = frames + 2), the time
  convolution (3x1x1) doubling the frames, the spatial upsampling's
  Conv2d written as the 1x3x3 Conv3d it equals per frame.

Grouped convolutions (mvit's pooling) are left out and counted; transposed
convolutions (the U-Net's) are not dense Conv3d layers and are left out.
"""

from .layers import ConvLayer, layer_of_module

VIDEO = ("r3d_18", "mc3_18", "r2plus1d_18", "s3d", "swin3d_t", "mvit_v2_s")
ALL = VIDEO + ("unet3d", "wan_decoder")


class Extracted:
    """The dense conv layers of one network at one input size, in call
    order, what was left out and why, and the module (None for layer
    lists) with its input shape, for whole-network timing."""

    def __init__(self, name, size_label):
        self.name = name
        self.size_label = size_label
        self.layers = []
        self.left_out = {}  # reason -> count
        self.note = ""
        self.module = None
        self.input_shape = None

    def leave_out(self, reason):
        self.left_out[reason] = self.left_out.get(reason, 0) + 1


def _hooked_layers(model, input_shape, device, extracted):
    """Runs `model` once on `input_shape` and records each Conv3d call.
    Tries the meta device first (shapes only, no arithmetic); operators
    without a meta kernel make it run on `device`."""
    import copy

    import torch

    def record(module, inputs, output):
        layer = layer_of_module(module, inputs[0].shape)
        if layer is None:
            extracted.leave_out("padding_mode %s" % module.padding_mode)
        else:
            extracted.layers.append(layer)

    def transposed(module, inputs, output):
        extracted.leave_out("ConvTranspose3d (not a dense Conv3d)")

    errors = []
    for where in ("meta", device):
        extracted.layers.clear()
        extracted.left_out.clear()
        # A copy runs (moving to the meta device drops the parameters' values).
        dtype = torch.float32 if where == "cpu" else torch.bfloat16
        copied = copy.deepcopy(model).to(device=where, dtype=dtype)
        for module in copied.modules():
            if isinstance(module, torch.nn.Conv3d):
                module.register_forward_hook(record)
            elif isinstance(module, torch.nn.ConvTranspose3d):
                module.register_forward_hook(transposed)
        x = torch.empty(input_shape, device=where, dtype=dtype)
        try:
            with torch.no_grad():
                copied(x if where == "meta" else x.normal_())
            return
        except (NotImplementedError, RuntimeError) as error:
            errors.append("%s: %s" % (where, str(error).splitlines()[0][:160]))
        finally:
            del copied, x
    # The network refuses this input size after some layers (s3d's 7x7
    # average pool at 112x112): keep what ran, and say so.
    extracted.note = ("forward stopped after %d conv calls (%s)"
                      % (len(extracted.layers), errors[-1]))


def _torchvision(name, **kwargs):
    import torchvision.models.video as video
    builder = getattr(video, name, None)
    if builder is None:
        import torchvision
        raise LookupError("torchvision %s has no %s" % (torchvision.__version__, name))
    return builder(**kwargs).eval()


UNET_CHANNELS = (32, 64, 128, 256, 320, 320)  # nnU-Net's 3d_fullres stages


def unet3d(in_channels=1, classes=3, channels=UNET_CHANNELS):
    """nnU-Net's PlainConvUNet (3d_fullres: 6 stages of UNET_CHANNELS), in
    eval mode; `channels` gives other stages (bench/train_step.py's small
    CPU model)."""
    import torch
    from torch import nn

    def block(c_in, c_out, stride):
        return nn.Sequential(
            nn.Conv3d(c_in, c_out, 3, stride=stride, padding=1),
            nn.InstanceNorm3d(c_out, eps=1e-5, affine=True),
            nn.LeakyReLU(0.01, inplace=True))

    class PlainConvUNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = nn.ModuleList()
            c_in = in_channels
            for i, c in enumerate(channels):
                self.encoder.append(nn.Sequential(block(c_in, c, 1 if i == 0 else 2),
                                                  block(c, c, 1)))
                c_in = c
            self.up = nn.ModuleList()
            self.decoder = nn.ModuleList()
            for i in range(len(channels) - 1, 0, -1):
                skip = channels[i - 1]
                self.up.append(nn.ConvTranspose3d(channels[i], skip, 2, stride=2))
                self.decoder.append(nn.Sequential(block(2 * skip, skip, 1), block(skip, skip, 1)))
            self.head = nn.Conv3d(channels[0], classes, 1)

        def forward(self, x):
            skips = []
            for stage in self.encoder:
                x = stage(x)
                skips.append(x)
            x = skips.pop()
            for up, stage in zip(self.up, self.decoder):
                x = stage(torch.cat([up(x), skips.pop()], dim=1))
            return self.head(x)

    return PlainConvUNet().eval()


def wan_decoder_layers(batch=1, latent=(60, 104), frames=1, z_dim=16, dim=96,
                       mult=(1, 2, 4, 4), res_blocks=2, temporal_up=(True, True, False)):
    """The conv layers of WAN 2.1's VAE Decoder3d for one chunk of `frames`
    latent frames at `latent` (H, W) resolution (480x832 video: 60x104),
    in call order, as the causal decode runs them (two cached frames in
    front of each 3-tap causal conv's input)."""
    h, w = latent
    t = frames
    layers = []

    def causal(c, f, kernel, t, h, w):
        q = kernel[0]
        cached = q - 1  # WAN's CausalConv3d pads 2 * p_t = q - 1 frames in front
        pad = (0, kernel[1] // 2, kernel[2] // 2)
        layers.append(ConvLayer(batch, c, t + cached, h, w, f, kernel, padding=pad, bias=True))

    dims = [dim * m for m in (mult[-1],) + tuple(reversed(mult))]  # 384 384 384 192 96
    causal(z_dim, dims[0], (3, 3, 3), t, h, w)                      # conv1
    for _ in range(2):                                               # middle: 2 res blocks
        causal(dims[0], dims[0], (3, 3, 3), t, h, w)
        causal(dims[0], dims[0], (3, 3, 3), t, h, w)
    for i, (c_in, c_out) in enumerate(zip(dims[:-1], dims[1:])):
        if i in (1, 2, 3):
            c_in //= 2  # the previous resample halved the channels
        for _ in range(res_blocks + 1):
            causal(c_in, c_out, (3, 3, 3), t, h, w)
            causal(c_out, c_out, (3, 3, 3), t, h, w)
            if c_in != c_out:
                causal(c_in, c_out, (1, 1, 1), t, h, w)              # shortcut
            c_in = c_out
        if i != len(mult) - 1:
            if temporal_up[i]:
                causal(c_out, 2 * c_out, (3, 1, 1), t, h, w)         # time_conv
                t *= 2
            h, w = 2 * h, 2 * w
            # Upsample (nearest) + Conv2d(dim, dim // 2, 3, padding=1) per frame.
            layers.append(ConvLayer(batch, c_out, t, h, w, c_out // 2, (1, 3, 3),
                                    padding=(0, 1, 1), bias=True))
    causal(dims[-1], 3, (3, 3, 3), t, h, w)                          # head
    return layers


def extract(name, size, batch, frames, device, unet_patch=(128, 192, 192), wan_frames=1,
            wan_latent=(60, 104), wan_batch=1):
    """The Extracted layers of network `name` at input `size` (H = W) for
    the video networks; the U-Net and the WAN decoder have their own
    input (unet_patch; wan_latent and wan_frames) and ignore `size`."""
    if name == "wan_decoder":
        ex = Extracted(name, "%dx%d latent x %d frame%s" % (
            wan_latent[0], wan_latent[1], wan_frames, "s" if wan_frames > 1 else ""))
        ex.layers = wan_decoder_layers(wan_batch, wan_latent, wan_frames)
        ex.note = "layer list of one causal decode chunk (no module: no whole-network time)"
        return ex
    if name == "unet3d":
        ex = Extracted(name, "%dx%dx%d patch" % tuple(unet_patch))
        model = unet3d()
        ex.input_shape = (batch, 1) + tuple(unet_patch)
    else:
        ex = Extracted(name, "%dx%d" % (size, size))
        model = _torchvision(name)
        ex.input_shape = (batch, 3, frames, size, size)
    _hooked_layers(model, ex.input_shape, device, ex)
    ex.module = None if ex.note else model
    return ex
