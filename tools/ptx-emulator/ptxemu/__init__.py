"""An executable model of the PTX that conv3d-mlir's GPU kernels are made of
(sm_80 mma.sync, sm_90a TMA + mbarrier + wgmma, sm_100a tcgen05), run on the
host with NumPy, with the hazards it finds reported (see README.md)."""
