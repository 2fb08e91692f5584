"""Where a server of ours listens: this machine only, or the network.

The gateway, mcp-server, the embedded broker and the metrics servers listen
on 127.0.0.1 unless told otherwise.  Two questions come up wherever one is
told otherwise, and are answered here alike: does the address reach beyond
this machine (:func:`is_loopback`), and which address does a client on this
machine use to reach it (:func:`local_address`; ``0.0.0.0`` is no address to
connect to).
"""

from __future__ import annotations

import ipaddress

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
