"""Compiling ahead of the timing, in a pool of processes.

Compilation is CPU work (MLIR passes, LLVM, ptxas), about a second per
kernel; the GPU machine has 16 cores. Worker processes compile into one
disk cache (each its own conv3d.Engine on that folder) while the main
process times; the main process's engine then loads each kernel from
that cache instead of compiling it. Workers are spawned (not forked): the
parent may hold a CUDA context.

The tuner's candidate configurations of a convolution come from
`conv3d-run --list-configs` (the configurations `--tune` times, without a
GPU): the Python API has no call that lists them.
"""

import json
import multiprocessing
import os
import subprocess
import time


def short_error(error):
    """The line of an engine error that names the problem: the first one
    after the "compiling <spec> (...):" header, at most 300 characters."""
    lines = [line.strip() for line in str(error).strip().splitlines() if line.strip()]
    if len(lines) > 1 and lines[0].startswith("compiling "):
        lines = lines[1:]
    return lines[0][:300] if lines else ""


def list_configs(layer, target, tool):
    """conv3d-run --list-configs --json for the layer: a dict with
    "heuristic" (the heuristic's configuration, key=value text),
    "candidates" (the tuner's others) and "remarks" (why a kernel was not
    taken)."""
    if not tool:
        raise RuntimeError("conv3d-run not found (--tool)")
    a = layer.spec_args()
    command = [tool, "--list-configs", "--json", "--target=%s" % target, "--dtype=bf16",
               "--filter-layout=fqrsc",
               "--input-shape=%s" % ",".join(map(str, a["input_shape"])),
               "--filter-shape=%s" % ",".join(map(str, a["filter_shape"])),
               "--stride=%s" % ",".join(map(str, a["strides"])),
               "--dilation=%s" % ",".join(map(str, a["dilations"])),
               "--padding=%s" % ",".join(map(str, a["padding"]))]
    if layer.bias:
        command.append("--bias")
    if layer.groups != 1:
        command.append("--groups=%d" % layer.groups)
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise RuntimeError("%s: %s" % (" ".join(command), done.stderr.strip()[-300:]))
    return json.loads(done.stdout)


_ENGINES = {}  # a worker's engine per cache folder (its memory cache stays small: one spec)


def _compile(job):
    """Worker: lists a layer's configurations and compiles them into the
    shared disk cache: the default one (the heuristic's), and with
    `all_candidates` every candidate. Returns (index, listed,
    [(config, compile_ms or None, error or None)]), "" naming the default
    configuration; `listed` is list_configs' dict, or {"error": ...}."""
    import conv3d
    index, layer, target, cache_dir, tool, all_candidates = job
    try:
        listed = list_configs(layer, target, tool)
    except (RuntimeError, OSError, ValueError, subprocess.SubprocessError) as error:
        listed = {"error": "listing the configurations: %s" % error}
    configs = [""]
    if all_candidates:
        heuristic = listed.get("heuristic")
        # The tuner may list the heuristic's own configuration again.
        configs += [c for c in listed.get("candidates", []) if c != heuristic]
    engine = _ENGINES.get(cache_dir)
    if engine is None:
        engine = _ENGINES[cache_dir] = conv3d.Engine(cache_dir=cache_dir)
    spec = conv3d.Spec.from_shapes(**layer.spec_args())
    results = []
    for config in configs:
        start = time.perf_counter()
        try:
            engine.compile(spec, target=target, config=config or None)
            results.append((config, (time.perf_counter() - start) * 1e3, None))
        except conv3d.Conv3dError as error:
            results.append((config, None, short_error(error)))
    return index, listed, results


def default_jobs():
    return max(1, min(16, (os.cpu_count() or 2) - 1))


class CompilePool:
    """Compiles the layers' configurations in spawned processes (jobs <= 1:
    in this one, as the results are asked for); `results()` yields
    _compile's results in the layers' order as they finish, so the caller
    times the first while the rest compile."""

    def __init__(self, jobs, layers, target, cache_dir, tool, all_candidates=False):
        work = [(i, layer, target, cache_dir, tool, all_candidates)
                for i, layer in enumerate(layers)]
        self.pool = None
        if jobs <= 1:
            self._iter = map(_compile, work)
        else:
            self.pool = multiprocessing.get_context("spawn").Pool(jobs)
            self._iter = self.pool.imap(_compile, work)

    def results(self):
        try:
            yield from self._iter
        finally:
            if self.pool is not None:
                self.pool.terminate()
                self.pool.join()
