"""The scripts the package runs are the repository's lua/ files, byte for byte."""
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
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
        self.assertEqual(set(scripts.names()), set(repo_scripts()))

    def test_a_script_takes_the_stream_when_its_header_says_so_and_its_body_opens_with_the_events_prelude(self):
        taking = [name for name in scripts.names() if scripts.takes_stream(name)]
        self.assertGreater(len(taking), 10, "the headers were not read")
        for name, text in repo_scripts().items():
            self.assertEqual(scripts.takes_stream(name), b"-- Events (PROTOCOL.md" in text, name)
        self.assertTrue(scripts.takes_stream("claim"))
        self.assertFalse(scripts.takes_stream("extend"))

    def test_each_script_found_is_its_lua_file_byte_for_byte(self):
        for name, text in repo_scripts().items():
            self.assertEqual(scripts.source(name), text, name)

    def test_pip_installs_a_package_that_carries_the_files_of_lua(self):
        # As docs/clients.md says: a venv that sees Debian's packages, pip
        # without build isolation; then the package is used from elsewhere.
        venv = tempfile.mkdtemp(prefix="echomq-venv-")
        try:
            subprocess.run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", venv], check=True,
                           capture_output=True, timeout=120)
            pip = subprocess.run([os.path.join(venv, "bin", "pip"), "install", "-q", "--no-build-isolation",
                                  os.path.join(REPO, "clients", "python")], capture_output=True, timeout=300)
            self.assertEqual(pip.returncode, 0, pip.stderr.decode(errors="replace"))
            probe = subprocess.run([os.path.join(venv, "bin", "python"), "-c",
                                    "import echomq.scripts as s; print(s.lua_dir())"],
                                   cwd=venv, capture_output=True, timeout=60, env={"PATH": "/usr/bin:/bin"})
            lua_dir = probe.stdout.decode().strip()
            self.assertTrue(lua_dir.startswith(venv), probe.stdout + probe.stderr)
            for name, text in repo_scripts().items():
                with open(os.path.join(lua_dir, name + ".lua"), "rb") as f:
                    self.assertEqual(f.read(), text, name)
        finally:
            shutil.rmtree(venv, ignore_errors=True)
            for left in ("build", "echomq.egg-info"):  # what pip's in-tree build leaves
                shutil.rmtree(os.path.join(REPO, "clients", "python", left), ignore_errors=True)

if __name__ == "__main__":
    unittest.main()
