"""Bearer-token authentication of gateway requests (upstream 2.1.4's scheme).

One shared secret (``--api-token``, default ``$GATEWAY_SECRET``); empty means
no authentication, as upstream.  REST clients send ``Authorization: Bearer
<token>``; browsers cannot set headers on a websocket, so the websockets
(the multiplexer and the import/export sockets) also accept
``?token=<token>``.  The query form is accepted on those paths only: a token in a URL ends up in proxy and access logs, which is a price
worth paying only where there is no other way.

The comparison is exact and takes constant time (``secrets.tokens_match``),
and the token is never logged.  HTTP itself drops whitespace around a header
value, which is why a token with surrounding whitespace is refused when the
gateway starts (``secrets.token_problem``) rather than half-accepted.
"""

from __future__ import annotations

from aiohttp import web
from trustgraph.base.safety.secrets import tokens_match

#: Paths anyone may call: they reveal nothing a probe could not see anyway.
PUBLIC_PATHS = frozenset({"/api/v1/health"})

SOCKET_PATH = "/api/v1/socket"


class TokenAuth:
    """Checks requests against the configured token (or lets all through when none is set)."""

    def __init__(self, token: str | None) -> None:
        self._token = token or ""

    @property
    def enabled(self) -> bool:
        """Whether a token is required at all (logged at start, never the token itself)."""
        return bool(self._token)

    def _matches(self, given: str | None) -> bool:
        return given is not None and tokens_match(given, self._token)

    def allows(self, request: web.Request) -> bool:
        """True when ``request`` may proceed."""
        return request.path in PUBLIC_PATHS or self.authorized(request)

    def authorized(self, request: web.Request) -> bool:
        """True when ``request`` carries the token (or none is needed), public path or not."""
        if not self._token:
            return True
        header = request.headers.get("Authorization", "")
        if header.startswith("Bearer ") and self._matches(header[len("Bearer "):]):
            return True
        return _is_socket(request.path) and self._matches(request.query.get("token"))


def _is_socket(path: str) -> bool:
    """Websocket endpoints, whose browser clients cannot set headers: the token may come as ``?token=``."""
    if path == SOCKET_PATH:
        return True
    parts = path.split("/")  # "", "api", "v1", "flow", flow, "import"|"export", kind
    return len(parts) == 7 and parts[1:4] == ["api", "v1", "flow"] and parts[5] in ("import", "export")

