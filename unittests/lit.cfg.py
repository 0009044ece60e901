# lit configuration that runs the GoogleTest binaries (*Tests) of the build.
import os

import lit.formats

config.name = "conv3d-unit"
config.test_format = lit.formats.GoogleTest(".", "Tests")
config.test_source_root = config.unittests_dir
config.test_exec_root = config.unittests_dir
# Tests compile what they test: no disk cache unless a test names one.
config.environment["CONV3D_CACHE_DIR"] = "off"

# Long cases: the units whose replays take seconds each run in
# check-conv3d-long only (lit parameter conv3d_tests, as in test/lit.cfg.py:
# short, the default, leaves them out; long runs only them; all runs
# everything). gtest reads GTEST_FILTER when run without --gtest_filter.
LONG_UNIT_TESTS = [
    "SM100BlockScaledModel.CausalThreeByThreeTwoChannelBlocks",
    "SM100BlockScaledModel.MutationsFail",
    "SM100BlockScaledModel.ViaTmaCausalTwoStepsBatchWrap",
    "SM100BlockScaledModel.ViaTmaCorruptMapsFail",
    "SM100BlockScaledModel.ViaTmaStridesAndDilations",
    "SM100BlockScaledModel.StridesDilationsBatchAndFilterTail",
    # The short run keeps two of each parameterized family.
    "Streams/CausalStream.ChunkingsEqualTheFullSequence/stride2_f32",
    "Streams/CausalStream.ChunkingsEqualTheFullSequence/stride2_dilation2_norm_f16",
    "Streams/CausalStream.ChunkingsEqualTheFullSequence/beta_gelu_f32",
    "Cases/QSliceAccuracy.WithinFivePercentOfUndecomposed/deep_5x3x3",
    "Cases/QSliceAccuracy.WithinFivePercentOfUndecomposed/symmetric_3x3x3",
    "Cases/QSliceAccuracy.WithinFivePercentOfUndecomposed/strided_depth",
    "Cases/QSliceAccuracy.WithinFivePercentOfUndecomposed/dilated_depth",
]
tests_mode = lit_config.params.get("conv3d_tests", "short")
if tests_mode == "short":
    config.environment["GTEST_FILTER"] = "-" + ":".join(LONG_UNIT_TESTS)
elif tests_mode == "long":
    config.environment["GTEST_FILTER"] = ":".join(LONG_UNIT_TESTS)
elif tests_mode != "all":
    lit_config.fatal("conv3d_tests must be short, long or all, not %r" % tests_mode)
# The host JIT's optimization level, as in test/lit.cfg.py: 0 in the
# quick run, the default (3) in the long one, the environment's if set.
if "CONV3D_JIT_OPT_LEVEL" in os.environ:
    config.environment["CONV3D_JIT_OPT_LEVEL"] = os.environ["CONV3D_JIT_OPT_LEVEL"]
elif tests_mode == "short":
    config.environment["CONV3D_JIT_OPT_LEVEL"] = "0"
