#!/usr/bin/env python3
"""conv3d.cuda_pool_memory(): without a usable device it raises what
cuda_device() raises; where the runtime has no pool of its own (the PTX
emulator: CONV3D_CUDA_DRIVER) it says so; with a GPU it reports the pool
(the high-water mark at least the use, the reservation at least that, a
reset bringing the mark down to the use; the device's graph memory likewise,
where the driver reports it)."""

import conv3d

try:
    device = conv3d.cuda_device()
except conv3d.Conv3dError as e:
    device, device_error = None, str(e)
try:
    memory = conv3d.cuda_pool_memory()
except conv3d.Conv3dError as e:
    memory, pool_error = None, str(e)

if device is None:
    print("no device: pool error is the device's: %s" % (memory is None
                                                        and pool_error == device_error))
elif memory is None:
    print("device, no pool of the runtime's: %s" % pool_error)
else:
    ok = memory["used_high"] >= memory["used"] and memory["reserved"] >= memory["used"]
    graph = memory["graph_used"] is None or memory["graph_used_high"] >= memory["graph_used"]
    conv3d.cuda_pool_memory(reset=True)
    after = conv3d.cuda_pool_memory()
    print("device, pool reported: %s" % (ok and graph and after["used_high"] == after["used"]
                                         and after["graph_used_high"] == after["graph_used"]))
