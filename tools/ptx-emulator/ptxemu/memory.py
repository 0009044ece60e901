"""Global memory (the emulated device's arena, shared with the process that
launched the kernel) and the address spaces a kernel sees.

Addresses: global and generic addresses of device memory are the arena's
addresses in the launching process. A CTA's shared memory has shared-window
addresses (rank << 24) | (base + offset), the CTA's rank in its cluster in
bits 24 and up, as the shared::cluster window addresses it (sm100 kernels
clear bit 24 to name the even CTA of a pair, as CUTLASS does); generic
addresses of shared memory are SHARED_GENERIC + that.
"""
import mmap

import numpy as np

from .errors import EmulatorError

SHARED_GENERIC = 1 << 44
RANK_SHIFT = 24
OFFSET_MASK = (1 << RANK_SHIFT) - 1


class GlobalMemory:
    """The device memory: one arena (an mmap of a file descriptor the
    emulated driver shares, or a plain buffer in tests) with its live
    allocations; accesses outside them are errors."""

    def __init__(self, buffer, base, allocations=None):
        self.buf = np.frombuffer(buffer, dtype=np.uint8)
        self.base = base
        self.size = self.buf.size
        self.views = {}
        # sorted (start, end) of live allocations; None: the whole arena
        self.allocations = None
        if allocations is not None:
            self.allocations = sorted((a, a + n) for a, n in allocations)
            self.starts = np.array([a for a, _ in self.allocations], dtype=np.uint64)
            self.ends = np.array([e for _, e in self.allocations], dtype=np.uint64)
        self._ro = not self.buf.flags.writeable
        # global writes of the current launch, by CTA (cross-CTA conflicts)
        self.writers = {}
        self.conflicts = []

    @classmethod
    def from_fd(cls, fd, base, size, allocations):
        m = mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        mem = cls(m, base, allocations)
        mem._mmap = m
        return mem

    def view(self, dtype):
        v = self.views.get(dtype)
        if v is None:
            n = self.size // np.dtype(dtype).itemsize
            v = self.buf[:n * np.dtype(dtype).itemsize].view(dtype)
            self.views[dtype] = v
        return v

    def contains(self, addr):
        return self.base <= addr < self.base + self.size

    def check(self, addrs, nbytes, what):
        """Raises unless every [a, a + nbytes) lies in one live allocation."""
        addrs = np.asarray(addrs, dtype=np.uint64)
        if addrs.size == 0:
            return
        lo = int(addrs.min())
        hi = int(addrs.max()) + nbytes
        if lo < self.base or hi > self.base + self.size:
            bad = addrs[(addrs < self.base) | (addrs + np.uint64(nbytes) > self.base + self.size)]
            raise EmulatorError('%s: address %#x is not device memory' % (what, int(bad[0])))
        if self.allocations is None:
            return
        i = np.searchsorted(self.starts, addrs, side='right') - 1
        ok = (i >= 0)
        ii = np.maximum(i, 0)
        ok &= addrs + np.uint64(nbytes) <= self.ends[ii]
        if not ok.all():
            a = int(addrs[~ok][0])
            raise EmulatorError('%s: [%#x, +%d) is outside every live allocation'
                                % (what, a, nbytes))

    def load(self, addrs, dtype, count=1, what='load'):
        """(n, count) values of `dtype` at addrs (aligned to the access)."""
        itemsize = np.dtype(dtype).itemsize
        addrs = np.asarray(addrs, dtype=np.uint64)
        self.check(addrs, itemsize * count, what)
        if (addrs % np.uint64(itemsize * count)).any() and count in (1, 2, 4):
            bad = int(addrs[(addrs % np.uint64(itemsize * count)) != 0][0])
            raise EmulatorError('%s: misaligned %d-byte access at %#x'
                                % (what, itemsize * count, bad))
        index = ((addrs - np.uint64(self.base)) // np.uint64(itemsize)).astype(np.int64)
        v = self.view(dtype)
        if count == 1:
            return v[index][:, None]
        return v[index[:, None] + np.arange(count)]

    def store(self, addrs, values, dtype, what='store', writer=None):
        """values: (n, count) of dtype."""
        itemsize = np.dtype(dtype).itemsize
        values = np.asarray(values).astype(dtype, copy=False)
        if values.ndim == 1:
            values = values[:, None]
        count = values.shape[1]
        addrs = np.asarray(addrs, dtype=np.uint64)
        self.check(addrs, itemsize * count, what)
        if (addrs % np.uint64(itemsize * count)).any() and count in (1, 2, 4):
            bad = int(addrs[(addrs % np.uint64(itemsize * count)) != 0][0])
            raise EmulatorError('%s: misaligned %d-byte access at %#x'
                                % (what, itemsize * count, bad))
        index = ((addrs - np.uint64(self.base)) // np.uint64(itemsize)).astype(np.int64)
        v = self.view(dtype)
        flat = (index[:, None] + np.arange(count)).ravel()
        if writer is not None:
            self.note_writes(flat * itemsize, itemsize, writer)
        v[flat] = values.ravel()

    def read_bytes(self, addr, n):
        self.check([addr], n, 'read')
        o = addr - self.base
        return self.buf[o:o + n]

    def note_writes(self, offsets, width, writer):
        """Records which CTA wrote each byte (`width`-byte stores at byte
        offsets into the arena) in this launch; two CTAs writing one byte
        without atomics is reported by the caller through `conflicts`.
        Bytes, not words: stores of different bytes of one word by two CTAs
        (a packed i8 output split across blocks) do not race."""
        cta = writer
        offsets = np.asarray(offsets, dtype=np.int64)
        byte = np.unique((offsets[:, None] + np.arange(width)).ravel()) if width > 1 \
            else np.unique(offsets)
        pages = byte >> 16
        for page in np.unique(pages):
            arr = self.writers.get(int(page))
            if arr is None:
                arr = np.full(1 << 16, -1, dtype=np.int32)
                self.writers[int(page)] = arr
            w = byte[pages == page] & ((1 << 16) - 1)
            prev = arr[w]
            clash = (prev >= 0) & (prev != cta)
            if clash.any():
                self.conflicts.append((int((page << 16) + w[clash][0]) + self.base,
                                       int(prev[clash][0]), cta))
            arr[w] = cta

    def new_launch(self):
        self.writers = {}
        self.conflicts = []
