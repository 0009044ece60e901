"""CUDA graphs of a chunked decoder's steps (Conv3dWanDecoder(cuda_graphs=True)).

A decode step (one latent frame through the whole decoder) launches a few
hundred kernels, and on a height split over GPUs some thirty point-to-point
exchanges besides. On one GPU the decode is GPU-bound and graphs gain
nothing; split over 4 GPUs the launches and exchanges set the pace, and
replaying them as graphs cut the decode's time by a third to a half
(bench/RESULTS.md, seventh session).

A step is fn(x, caches) -> y, where caches is a dict from the decoder's
layers to their frame caches (tensors, or markers such as WAN's first-chunk
one) that fn reads and replaces. Steps are keyed by their signature: x's and
every cache's shape, dtype and device, the markers, and a token of the
parameters' state. The first step of a signature runs eagerly (it
initializes what capture cannot: compilation, plans, communicators); the
second is captured, then replayed, and so is every later one, across decode
calls. A graph reads its own copy of x and the caches from this object's
cache buffers, one per (layer, shape, dtype, device), which every graph
shares: a step's new caches are copied into them at the step's end (after
the step's last read of the old ones), so the next step's graph finds them
in place, and the caches cost one copy of each, not one per graph. Its
output y stays in the graphs' memory pool, valid until the next replay:
callers copy it out, as a decode does.

One memory pool is shared by all of an object's graphs (PyTorch's rule for
shared pools: replay in the order of capture, each output consumed before
the next replay; a decode's steps are sequential). If a capture fails, the
object stops capturing, warns once and runs every step eagerly.
"""

import warnings

import torch


def _tensor_signature(t):
    return (tuple(t.shape), t.dtype, t.device)


def signature(x, caches, parameters):
    """The key of a step: what a captured graph depends on besides data."""
    entries = []
    for key in sorted(caches, key=repr):
        value = caches[key]
        entries.append((key, _tensor_signature(value) if isinstance(value, torch.Tensor)
                        else ("marker", id(value))))
    return (_tensor_signature(x), tuple(entries), parameters)


class CudaGraphBackend:
    """Capture and replay with torch.cuda (ChunkGraphs' default backend;
    tests give one that emulates a graph on the CPU)."""

    @staticmethod
    def applies(x):
        return x.device.type == "cuda"

    @staticmethod
    def capture(step, pool, device):
        """(graph, step()'s result as captured: tensors each replay fills).
        step reads only the graph's own input buffers."""
        graph = torch.cuda.CUDAGraph()
        torch.cuda.synchronize(device)
        with torch.cuda.graph(graph, pool=pool):
            result = step()
        return graph, result

    @staticmethod
    def pool(graph):
        return graph.pool()

    @staticmethod
    def replay(graph):
        graph.replay()


class _Graph:
    __slots__ = ("graph", "x", "inputs", "y", "outputs")

    def __init__(self, graph, x, inputs, y, outputs):
        self.graph, self.x, self.inputs, self.y, self.outputs = graph, x, inputs, y, outputs


def _storage_pointer(t):
    # (untyped_storage from PyTorch 2.0; Debian's 1.13 has storage())
    return (t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()).data_ptr()


def _same_memory(a, b):
    return _storage_pointer(a) == _storage_pointer(b)


class ChunkGraphs:
    """The captured steps of one decoder (see the module docstring)."""

    def __init__(self, backend=None):
        self._backend = backend or CudaGraphBackend()
        self._seen = set()
        self._graphs = {}
        self._buffers = {}
        self._pool = None
        self._parameters = None
        self.enabled = True
        self.captures = 0
        self.replays = 0

    def clear(self):
        """Forgets every graph and frees their memory pool."""
        self._seen.clear()
        self._graphs.clear()
        self._buffers.clear()
        self._pool = None
        self._parameters = None

    def buffers(self):
        """Every tensor the graphs read from or leave their results in (their
        copies of x and of the caches, their outputs): dead between decodes,
        which tests poison to show that no decode reads what the last one
        left."""
        for entry in self._graphs.values():
            yield entry.x
            yield entry.y
        yield from self._buffers.values()

    def _buffer(self, key, like):
        """The cache buffer of layer `key` for tensors like `like` (made
        with its strides on first use)."""
        index = (key,) + _tensor_signature(like)
        buffer = self._buffers.get(index)
        if buffer is None:
            buffer = self._buffers[index] = torch.empty_strided(
                like.shape, like.stride(), dtype=like.dtype, device=like.device)
        return buffer

    def run(self, fn, x, caches, parameters):
        """fn(x, caches), eagerly or as a graph's replay; caches updated in
        place as fn would. `parameters`: a hashable token that changes when
        a parameter fn reads is replaced or changed in place."""
        if not self.enabled or not self._backend.applies(x):
            return fn(x, caches)
        if parameters != self._parameters:
            self.clear()  # graphs read the parameters they were captured with
            self._parameters = parameters
        key = signature(x, caches, parameters)
        entry = self._graphs.get(key)
        if entry is None:
            if key not in self._seen:
                self._seen.add(key)
                return fn(x, caches)
            entry = self._capture(fn, x, caches)
            if entry is None:
                return fn(x, caches)
            self._graphs[key] = entry
        return self._replay(entry, x, caches)

    def _capture(self, fn, x, caches):
        # x may be a slice of a longer latent: the graph's own copy is dense,
        # so one graph serves latents of every length.
        static_x = torch.empty_like(x, memory_format=(torch.channels_last_3d if x.dim() == 5
                                                      else torch.contiguous_format))
        inputs = {k: self._buffer(k, v) if isinstance(v, torch.Tensor) else v
                  for k, v in caches.items()}

        def step():
            outputs = dict(inputs)
            y = fn(static_x, outputs)
            # The new caches into the shared buffers, after every read of the
            # old ones (a buffer may be both: the steady state's).
            for k, v in outputs.items():
                if isinstance(v, torch.Tensor):
                    buffer = self._buffer(k, v)
                    if buffer is not v:
                        buffer.copy_(v.clone() if _same_memory(v, buffer) else v)
                    outputs[k] = buffer
            return y, outputs
        try:
            graph, (y, outputs) = self._backend.capture(step, self._pool, x.device)
        except Exception as err:  # noqa: BLE001 - any failure: eager from now on
            self.enabled = False
            self.clear()
            warnings.warn("conv3d: CUDA graphs are off for this decoder: capturing a step "
                          "failed (%s: %s); every step runs eagerly" % (type(err).__name__, err),
                          RuntimeWarning, stacklevel=4)
            return None
        if self._pool is None:
            self._pool = self._backend.pool(graph)
        self.captures += 1
        return _Graph(graph, static_x, inputs, y, outputs)

    def _replay(self, entry, x, caches):
        entry.x.copy_(x)
        for key, static in entry.inputs.items():
            value = caches[key]
            if isinstance(static, torch.Tensor) and value is not static:
                static.copy_(value)
        self._backend.replay(entry.graph)
        self.replays += 1
        caches.clear()
        caches.update(entry.outputs)
        return entry.y
