# SPDX-License-Identifier: Apache-2.0
"""Builds epsim's Python module with CMake: `pip install --no-build-isolation .` (docs/python.md).

The module target _epsim is built in a private Release tree (tests and benchmarks off), or, with
EPSIM_BUILD_DIR=DIR, in an existing CMake build tree configured with EPSIM_PYTHON on (CI reuses its
build: nothing compiles twice). CMAKE_BUILD_PARALLEL_LEVEL (or EPSIM_JOBS) sets -j.
"""
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        reuse = os.environ.get("EPSIM_BUILD_DIR")
        build = Path(reuse).resolve() if reuse else Path(self.build_temp).resolve() / "cmake"
        if not reuse:
            build.mkdir(parents=True, exist_ok=True)
            subprocess.run(["cmake", "-S", str(ROOT), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
                            "-DEPSIM_BUILD_TESTS=OFF", "-DEPSIM_BUILD_BENCH=OFF", "-DEPSIM_PYTHON=ON", "-DEPSIM_WERROR=OFF",
                            f"-DPython3_EXECUTABLE={sys.executable}"], check=True)
        elif not (build / "CMakeCache.txt").is_file():
            sys.exit(f"EPSIM_BUILD_DIR={reuse}: not a CMake build tree (no CMakeCache.txt)")
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or os.environ.get("EPSIM_JOBS") or str(os.cpu_count())
        subprocess.run(["cmake", "--build", str(build), "--target", "_epsim", "-j", jobs], check=True)
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        built = build / "python" / "epsim" / ("_epsim" + suffix)
        if not built.is_file():
            found = sorted(p.name for p in (build / "python" / "epsim").glob("_epsim*"))
            sys.exit(f"{built} is missing (found {found or 'no module'}): the build tree's Python is not "
                     f"{sys.executable}; configure it with -DPython3_EXECUTABLE={sys.executable}")
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built, target)


setup(ext_modules=[CMakeExtension("epsim._epsim")], cmdclass={"build_ext": CMakeBuild})
