# lit configuration that runs the GoogleTest binaries (*Tests) of the build.
import os

import lit.formats

config.name = "conv3d-unit"
config.test_format = lit.formats.GoogleTest(".", "Tests")
config.test_source_root = config.unittests_dir
config.test_exec_root = config.unittests_dir
