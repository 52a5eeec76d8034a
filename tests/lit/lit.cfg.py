# lit configuration: FileCheck tests for Ember's passes and tools.
import os
import sys

import lit.formats

config.name = "ember"
config.test_format = lit.formats.ShTest(False)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.excludes = ["lit.cfg.py"]
# The venv's bin holds ember-opt and the `filecheck` console script.
bindir = os.path.dirname(sys.executable)
config.environment["PATH"] = bindir + os.pathsep + os.environ.get("PATH", "")
config.substitutions.append(("%PYTHON", sys.executable))
