"""The scripts the package runs are the repository's lua/ files, byte for byte."""
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from echomq import scripts  # noqa: E402
from server import REPO  # noqa: E402

LUA = os.path.join(REPO, "lua")


def repo_scripts():
    out = {}
    for f in glob.glob(os.path.join(LUA, "*.lua")):
        with open(f, "rb") as text:
            out[os.path.basename(f)[:-4]] = text.read()
    return out


class Scripts(unittest.TestCase):
    def test_the_names_are_the_files_of_lua(self):
        self.assertEqual(set(scripts.NAMES), set(repo_scripts()))

    def test_each_script_found_is_its_lua_file_byte_for_byte(self):
        for name, text in repo_scripts().items():
            self.assertEqual(scripts.source(name), text, name)

    def test_an_installed_package_carries_the_files_of_lua(self):
        # setup.py's build copies lua/ into the package; build it as pip would.
        out = tempfile.mkdtemp(prefix="echomq-build-")
        try:
            subprocess.run([sys.executable, "setup.py", "-q", "build", "--build-base", out],
                           cwd=os.path.join(REPO, "clients", "python"), check=True, capture_output=True)
            built = glob.glob(os.path.join(out, "lib*", "echomq", "lua"))
            self.assertEqual(len(built), 1)
            for name, text in repo_scripts().items():
                with open(os.path.join(built[0], name + ".lua"), "rb") as f:
                    self.assertEqual(f.read(), text, name)
        finally:
            shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
