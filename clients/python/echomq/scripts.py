"""The emq/1 transitions: the repository's lua/ files, run by EVALSHA.

The files are never copied into this source tree. An installed package
carries the copy its build took of lua/ (setup.py), a source checkout reads
the repository's lua/ itself; ECHOMQ_LUA_DIR overrides both. A test checks
the files found are byte for byte the repository's.
"""
import os
import re

import redis

from .errors import from_reply

def lua_dir():
    """Where the scripts are read from."""
    if os.environ.get("ECHOMQ_LUA_DIR"):
        return os.environ["ECHOMQ_LUA_DIR"]
    here = os.path.dirname(os.path.abspath(__file__))
    for candidate in (os.path.join(here, "lua"), os.path.join(here, "..", "..", "..", "lua")):
        if os.path.isfile(os.path.join(candidate, "enqueue.lua")):
            return os.path.normpath(candidate)
    raise FileNotFoundError("the emq/1 scripts were not found beside the package nor in the repository's lua/: "
                            "reinstall echomq from the repository, or set ECHOMQ_LUA_DIR")


def names():
    """The transitions: one per .lua file of lua_dir(), which is the only list of them."""
    return sorted(f[:-4] for f in os.listdir(lua_dir()) if f.endswith(".lua"))


_sources = {}


def source(name):
    if name not in _sources:
        with open(os.path.join(lua_dir(), name + ".lua"), "rb") as f:
            _sources[name] = f.read()
    return _sources[name]


# A KEYS line of a script's header that names the queue's events stream.
_STREAM_KEY_LINE = re.compile(rb"^[ \t]*KEYS\[\d+\][ \t]+emq:\{q\}:events\b", re.MULTILINE)
_takes_stream = {}


def takes_stream(name):
    """Whether the transition takes the events stream as its last KEY and its
    length as its last ARGV: its header (the comment it opens with) declares it."""
    if name not in _takes_stream:
        header = source(name).split(b"]]", 1)[0]
        _takes_stream[name] = _STREAM_KEY_LINE.search(header) is not None
    return _takes_stream[name]


class Scripts:
    """Runs transitions by SHA on one client, loading a script on NOSCRIPT."""

    def __init__(self, client):
        self.client = client
        self._sha = {}

    def sha(self, name):
        if name not in self._sha:
            self._sha[name] = self.client.script_load(source(name))
        return self._sha[name]

    def raw(self, name, keys, args):
        """The reply as the server gave it; an error reply is raised as redis-py raises it."""
        try:
            return self.client.evalsha(self.sha(name), len(keys), *keys, *args)
        except redis.exceptions.NoScriptError:
            self._sha.pop(name, None)
            return self.client.evalsha(self.sha(name), len(keys), *keys, *args)

    def run(self, name, keys, args):
        """The reply; an EMQ error reply is raised as this package's error."""
        try:
            return self.raw(name, keys, args)
        except redis.exceptions.ResponseError as e:
            raise from_reply(e) from None
