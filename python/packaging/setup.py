"""Packages the mha that `make` built into build/python (python/README.md,
"Installing"): the extension module mha/_mha*.so as it is, and the package's
Python files. Nothing is compiled here: the module is the one the build
linked against this machine's LLVM, MLIR and libomp.

    /usr/bin/python3 -m pip install --no-build-isolation --no-deps \\
        --target DIR build/python

--no-build-isolation uses Debian's setuptools and wheel instead of
downloading them; --no-deps leaves NumPy (and PyTorch for mha.torch) to
Debian's packages.
"""
import atexit
import glob
import os
import shutil
import sys
import tempfile

from setuptools import setup
from setuptools.dist import Distribution

here = os.path.dirname(os.path.abspath(__file__))
if not glob.glob(os.path.join(here, "mha", "_mha*.so")):
    sys.exit("error: %s has no mha/_mha*.so: build it with `make` first, "
             "and install from the build folder's python/, not from the "
             "source tree" % here)


# setuptools' own files (build/, mha.egg-info) go to a folder of this run,
# not into the build folder: two installs at once do not meet, and
# build/python keeps only what `make` put there.
scratch = tempfile.mkdtemp(prefix="mha-setup-")
atexit.register(shutil.rmtree, scratch, ignore_errors=True)


class BinaryDistribution(Distribution):
    """A wheel for this Python and platform (the module is compiled),
    though setup() builds no extension itself."""

    def has_ext_modules(self):
        return True


setup(
    name="mha",
    version="0.1.0",
    description="Multi-head attention compiled by mha's MLIR compiler, "
                "called on NumPy arrays and PyTorch tensors",
    packages=["mha"],
    package_data={"mha": ["_mha*.so"]},
    python_requires=">=3.9",
    install_requires=["numpy"],
    distclass=BinaryDistribution,
    options={"build": {"build_base": os.path.join(scratch, "build")},
             "egg_info": {"egg_base": scratch}},
    zip_safe=False,
)
