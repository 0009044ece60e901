#!/usr/bin/env python3
"""A bf16 data gradient compiled for the CPU from Python at the JIT's level 3.

LLVM's x86 back end turns the f32 -> bf16 rounding of that code into a call
of __truncsfbf2 at -O3, and the library, loaded by ctypes, is not in the
JIT's global lookup: the JIT must define the symbol itself (JitFunction.cpp);
before it did, this compile failed with "Symbols not found: [ __truncsfbf2 ]"
(test/Python/autograd-long.test on Debian's LLVM 22.1.8)."""
import conv3d
from conv3d import Spec

spec = Spec.from_shapes(input_shape=(1, 6, 5, 9, 4), filter_shape=(2, 3, 2, 4, 5),
                        strides=(1, 2, 3), dilations=(2, 1, 2), padding=(2, 2, 0, 0, 1, 1),
                        filter_layout="fqrsc", dtype="bf16")
conv3d.Engine().compile(spec, target="cpu", kind="dgrad")
print("bf16 dgrad compiled at level 3")
