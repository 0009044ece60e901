"""DLPackOnly: an array known to conv3d only through the DLPack protocol (a
stand-in for any producer that is neither NumPy, PyTorch nor CuPy), for the
Python tests."""


class DLPackOnly:
    """`array`'s __dlpack__ and __dlpack_device__, the device overridable
    (a (type, id) pair) to make a producer claim another device."""

    def __init__(self, array, device=None):
        self._array = array
        self._device = device

    def __dlpack__(self, stream=None):
        return self._array.__dlpack__()

    def __dlpack_device__(self):
        return self._device or self._array.__dlpack_device__()
