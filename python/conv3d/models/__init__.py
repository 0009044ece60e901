"""Whole models built on conv3d's PyTorch layers (need PyTorch).

    from conv3d.models import wan_vae
    decoder = wan_vae.WanVAEDecoder().eval()            # WAN 2.1's decoder
    video = wan_vae.Conv3dWanDecoder(decoder).decode(z)  # on conv3d
"""
