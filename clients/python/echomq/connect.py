"""Clients from the URL forms emq takes, and the wire handshake.

  valkey://[user[:password]@]host[:port][/db]   (redis:// the same)
  valkeys://..., rediss://...                   TLS, the server always verified
  unix://[user[:password]@]/path/to/socket[?db=N]

TLS files come from ssl_ca_certs / ssl_certfile / ssl_keyfile keywords, or
EMQ_TLS_CA / EMQ_TLS_CERT / EMQ_TLS_KEY as emq reads them. cluster=True
connects to a cluster node's URL with redis-py's RedisCluster.
"""
import os
from urllib.parse import unquote, urlsplit, parse_qs

import redis

from .errors import InvalidError, WireError
from .keys import VERSION_KEY

WIRE = b"emq/1"


def _port(parts, url):
    try:
        return parts.port or 6379
    except ValueError:
        raise InvalidError("%s: the port is not a number in 1..65535" % _redacted(url)) from None


def _redacted(url):
    parts = urlsplit(url)
    if parts.password is None:
        return url
    return url.replace(":" + parts.password + "@", ":***@", 1)


def client_from_url(url, *, cluster=False, **tls):
    """A redis-py client for an emq URL; raises InvalidError naming what is wrong."""
    parts = urlsplit(url)
    scheme = parts.scheme
    user = unquote(parts.username) if parts.username else None
    password = unquote(parts.password) if parts.password else None
    common = dict(username=user, password=password, socket_connect_timeout=2, socket_timeout=30)
    if scheme == "unix":
        if not parts.path:
            raise InvalidError("%s: a unix URL needs a socket path: unix:///path/to/socket?db=N" % _redacted(url))
        query = parse_qs(parts.query)
        db = query.get("db", ["0"])[0]
        if not db.isdigit():
            raise InvalidError("%s: db must be a number" % _redacted(url))
        return redis.Redis(unix_socket_path=parts.path, db=int(db), **common)
    if scheme not in ("valkey", "redis", "valkeys", "rediss"):
        raise InvalidError("%s: the scheme must be valkey://, redis://, valkeys://, rediss:// or unix://" % _redacted(url))
    if not parts.hostname:
        raise InvalidError("%s: no host" % _redacted(url))
    path = parts.path.strip("/")
    if path and not path.isdigit():
        raise InvalidError("%s: the path must be a db number" % _redacted(url))
    kw = dict(common, host=parts.hostname, port=_port(parts, url))
    if scheme in ("valkeys", "rediss"):
        kw.update(ssl=True, ssl_cert_reqs="required", ssl_check_hostname=True,
                  ssl_ca_certs=tls.get("ssl_ca_certs") or os.environ.get("EMQ_TLS_CA") or None,
                  ssl_certfile=tls.get("ssl_certfile") or os.environ.get("EMQ_TLS_CERT") or None,
                  ssl_keyfile=tls.get("ssl_keyfile") or os.environ.get("EMQ_TLS_KEY") or None)
    if cluster:
        if path and path != "0":
            raise InvalidError("%s: a cluster has only db 0" % _redacted(url))
        return redis.RedisCluster(**kw)
    return redis.Redis(db=int(path or 0), **kw)


def handshake(client):
    """SET {emq}:version emq/1 NX; refuses a server that speaks another wire."""
    client.set(VERSION_KEY, WIRE, nx=True)
    held = client.get(VERSION_KEY)
    if held != WIRE:
        raise WireError("EMQWIRE %s holds %r, not emq/1: this server speaks another wire" % (VERSION_KEY, held))
