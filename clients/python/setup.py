"""Builds echomq with a copy of the repository's lua/ taken at build time.

The copy lives only in the built package (never in this source tree), so
it cannot drift from lua/: an installed package carries the scripts of the
checkout it was installed from. Its version is the repository's VERSION,
the one emqd, emq and the emq module say.
"""
import glob
import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
LUA = os.path.join(HERE, "..", "..", "lua")
VERSION = os.path.join(HERE, "..", "..", "VERSION")


def repository_version():
    try:
        with open(VERSION, encoding="ascii") as f:
            return f.readline().strip()
    except FileNotFoundError:
        raise SystemExit("echomq: no VERSION beside clients/python: install from a checkout of the repository")


class BuildWithScripts(build_py):
    def run(self):
        super().run()
        files = sorted(glob.glob(os.path.join(LUA, "*.lua")))
        if not files:
            raise SystemExit("echomq: no lua/*.lua beside clients/python: install from a checkout of the repository")
        target = os.path.join(self.build_lib, "echomq", "lua")
        os.makedirs(target, exist_ok=True)
        for f in files:
            shutil.copyfile(f, os.path.join(target, os.path.basename(f)))


setup(version=repository_version(), cmdclass={"build_py": BuildWithScripts})
