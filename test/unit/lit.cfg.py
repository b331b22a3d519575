# lit configuration of the GoogleTest unit tests: every test of every
# executable whose name ends in "Tests" becomes one lit test.
import os

import lit.formats

config.name = "mha-unit"
config.suffixes = []
config.test_exec_root = os.path.join(config.mha_obj_root, "test", "unit")
config.test_source_root = config.test_exec_root
config.test_format = lit.formats.GoogleTest(".", "Tests")

lit_config.load_config(
    config, os.path.join(config.mha_src_root, "test", "sanitizers", "lit.sanitizers.py")
)
