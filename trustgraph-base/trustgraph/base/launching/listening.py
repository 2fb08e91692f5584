"""Where a server of ours listens: this machine only, or the network.

The gateway, mcp-server, the embedded broker and the metrics servers listen
on 127.0.0.1 unless told otherwise.  Two questions come up wherever one is
told otherwise, and are answered here alike: does the address reach beyond
this machine (:func:`is_loopback`), and which address does a client on this
machine use to reach it (:func:`local_address`; ``0.0.0.0`` is no address to
connect to).  A third comes up before tg-launch starts a server on a fixed
port: does something listen there already (:func:`port_taken`)?
"""

from __future__ import annotations

import errno
import ipaddress
import socket

_WILDCARDS = ("", "0.0.0.0", "::")


def is_loopback(host: str) -> bool:
    """Whether a server listening on ``host`` is reachable from this machine only.

    ``localhost`` and every loopback address (``127.0.0.0/8``, ``::1``) are;
    ``0.0.0.0``, ``::``, any other address and any other name are not (a name
    may resolve to anything).
    """
    name = host.strip().strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def local_address(host: str) -> str:
    """The address a client on this machine connects to for a server listening on ``host``."""
    if host.strip() in _WILDCARDS:
        return "::1" if host.strip() == "::" else "127.0.0.1"
    return host


def port_taken(host: str, port: int) -> bool:
    """Whether a server could not listen on ``host:port`` because something else listens there.

    Asked by binding, as the server will (``SO_REUSEADDR``, as aiohttp and
    uvicorn set it): a connection test would miss a listener on another
    address of the same port (``0.0.0.0`` beside ``127.0.0.1``), which still
    makes the server's bind fail.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host.strip("[]"), port))
        except OSError as e:
            return e.errno == errno.EADDRINUSE
    return False
