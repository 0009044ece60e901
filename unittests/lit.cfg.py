# lit configuration that runs the GoogleTest binaries (*Tests) of the build.
import os

import lit.formats

config.name = "conv3d-unit"
config.test_format = lit.formats.GoogleTest(".", "Tests")
config.test_source_root = config.unittests_dir
config.test_exec_root = config.unittests_dir
# Tests compile what they test: no disk cache unless a test names one.
config.environment["CONV3D_CACHE_DIR"] = "off"
