"""Shared plumbing for the ``tg-*`` commands: a tiny REST client (:class:`GatewayClient`), argparse
helpers and the error-reporting wrapper every ``main()`` goes through.

The client is ``requests``, the library ``trustgraph.api`` (upstream's
Python API) is built on, so the commands and that API have one HTTP stack.
It is imported on the first call, not with the module: it takes about 0.1 s
to import (more on a loaded machine), which ``--help`` and a refused argument
need not pay.  Nothing in this module imports aiohttp.

Why a wrapper around every ``main()``: upstream prints ``Exception: ...`` and
exits 0, which makes failures invisible to scripts and ``make``.  Our commands
print exactly one line, ``tg-xxx: error: <what went wrong and what to do>``,
on stderr and exit nonzero (1, or 130 after Ctrl-C).  That line never shows
the token or credentials inside a URL (``trustgraph.base.safety.secrets.scrub``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import sys
import time
from collections.abc import Callable
from typing import Any, NoReturn

from .safety.secrets import remember, scrub

DEFAULT_URL = "http://localhost:8088/"

# The gateway gives up on a backend reply after a fixed 120 s and answers
# with a "Timeout" error; wait a little longer than that so the user sees the
# gateway's explanation rather than our own, less specific, one.
DEFAULT_TIMEOUT = 130.0

START_HINT = "is the system running? start it with `make run` (or `tg-launch`)"

#: The ``Server`` header mcp-server answers with, so that a command pointed at it can say so.
MCP_SERVER_HEADER = "trustgraph mcp-server"


def not_found_hint(url: str, headers: Any = None) -> str:
    """What an HTTP 404 from ``url`` (a gateway route under it) means: ``url`` is not the gateway.

    Most often it is the MCP server's port (8089, next to the gateway's 8088), which
    serves only its MCP endpoint; it says who it is in its ``Server`` header.
    """
    server = str((headers or {}).get("Server") or "")
    if server.startswith(MCP_SERVER_HEADER):
        return (f"{url} is TrustGraph's MCP server (for MCP clients, at its /mcp endpoint), not the API "
                f"gateway; give the gateway's URL with -u or TRUSTGRAPH_URL ({DEFAULT_URL} under make run)")
    return (f"nothing there serves the API gateway's routes; is {url} the gateway's URL? "
            f"({DEFAULT_URL} under make run, where 8089 is the MCP server)")


class CliError(Exception):
    """A failure the user can act on; its text is shown as-is after
    ``tg-xxx: error:``, so it should say what went wrong and what to do.
    ``status`` is the exit status (1 unless a command documents others)."""

    def __init__(self, message: str = "", status: int = 1) -> None:
        super().__init__(message)
        self.status = status


def default_url() -> str:
    """The API URL used when ``-u`` is not given: ``$TRUSTGRAPH_URL`` or the
    local gateway."""
    return os.environ.get("TRUSTGRAPH_URL") or DEFAULT_URL


def default_token() -> str | None:
    """The bearer token used when ``-t`` is not given."""
    return os.environ.get("TRUSTGRAPH_TOKEN") or None


def normalise_url(url: str) -> str:
    """Return ``url`` with exactly one trailing slash, so that joining it
    with ``api/v1/...`` works whether or not the user typed the slash."""
    url = url.strip()
    if "://" not in url:
        raise CliError(
            f"invalid API URL {url!r}: it must start with http:// or https:// (e.g. {DEFAULT_URL})"
        )
    return url.rstrip("/") + "/"


def _one_line(text: str) -> str:
    """Collapse whitespace runs (including newlines) to single spaces so an
    error always fits on the promised single line."""
    return " ".join(text.split())


def _excerpt(raw: bytes, limit: int = 200) -> str:
    """A short, single-line, printable preview of a response body."""
    text = _one_line(raw.decode("utf-8", errors="replace"))
    return text if len(text) <= limit else text[:limit] + "..."


def describe_error(err: Any) -> str:
    """Render the ``error`` member of a gateway reply.

    The gateway sends routing/parse failures as a bare string and service
    failures as ``{"type": ..., "message": ...}``; both become one line.
    """
    if isinstance(err, dict):
        etype = str(err.get("type") or "").strip()
        message = str(err.get("message") or "").strip()
        if etype and message:
            return f"{etype}: {message}"
        return message or etype or json.dumps(err)
    return str(err)


class GatewayClient:
    """The commands' synchronous JSON-over-HTTP client of the API gateway's REST
    endpoints (``POST {url}api/v1/{kind}``).

    Not :class:`trustgraph.api.Api`, upstream's Python API (kept under that
    name for code written for upstream): this one turns every failure into a
    :class:`CliError` line a command prints, and sends the call's deadline."""

    def __init__(
        self,
        url: str | None = None,
        token: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        self.url = normalise_url(url if url is not None else default_url())
        self.token = token or None
        self.timeout = timeout
        remember(self.token)  # masked in any error line this command prints

    def post(self, path: str, body: dict[str, Any], timeout: float | None = None) -> dict[str, Any]:
        """POST ``body`` as JSON to ``{url}{path}`` and return the decoded
        reply, raising :class:`CliError` with an actionable message on any
        transport, HTTP, decoding or gateway-reported failure."""
        target = self.url + path.lstrip("/")
        wait = self.timeout if timeout is None else timeout
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": "trustgraph-cli",
        }
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        # Our gateway ends the call (and the services behind it) when we stop waiting.
        headers["TrustGraph-Deadline"] = f"{time.time() + wait:.3f}"
        data = json.dumps(body).encode("utf-8")
        response = self._send("POST", target, wait, headers, data)
        status, raw = response.status_code, response.content
        if status == 401:
            raise self._unauthorized()
        if status == 404:
            raise CliError(f"HTTP 404 {response.reason} from {target}: {not_found_hint(self.url, response.headers)}")
        if status >= 400:
            body_text = _excerpt(raw)
            raise CliError(
                f"HTTP {status} {response.reason} from {target}" + (f": {body_text}" if body_text else "")
            )

        if status != 200:
            raise CliError(f"HTTP {status} from {target}: {_excerpt(raw)}")

        try:
            reply = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise CliError(
                f"invalid JSON reply from {target}: {_excerpt(raw) or '(empty)'};"
                f" is {self.url} really a TrustGraph API gateway?"
            ) from None
        if not isinstance(reply, dict):
            raise CliError(f"unexpected reply from {target}: expected a JSON object, got {_excerpt(raw)}")

        err = reply.get("error")
        if err:
            raise CliError(_one_line(describe_error(err)))
        return reply

    def _send(self, method: str, target: str, wait: float, headers: dict[str, str],
              data: bytes | None = None) -> Any:
        """One request; every failure to get an HTTP reply is a :class:`CliError` naming ``target``."""
        import requests  # here, not at the top: see the module's docstring

        try:
            return requests.request(method, target, data=data, headers=headers, timeout=wait)
        except requests.Timeout as e:
            raise self._transport_error(target, TimeoutError(str(e)), wait) from None
        except (requests.exceptions.InvalidURL, requests.exceptions.InvalidSchema,
                requests.exceptions.MissingSchema) as e:  # malformed URL, e.g. "http://:x/"
            raise CliError(f"invalid API URL {self.url}: {e}") from None
        except requests.ConnectionError as e:
            cause = os_cause(e)
            if cause is None:  # connected, but what answered does not speak HTTP
                raise CliError(
                    f"bad HTTP reply from {target} ({type(_innermost(e)).__name__});"
                    f" is {self.url} really a TrustGraph API gateway?"
                ) from None
            raise self._transport_error(target, cause, wait) from None
        except requests.RequestException as e:  # a reply that broke off or cannot be decoded
            raise CliError(
                f"bad HTTP reply from {target} ({type(_innermost(e)).__name__});"
                f" is {self.url} really a TrustGraph API gateway?"
            ) from None

    def _unauthorized(self) -> CliError:
        return CliError(f"unauthorized: set --token or TRUSTGRAPH_TOKEN (the gateway at {self.url} "
                        "rejected the request)")

    def _transport_error(self, target: str, reason: Any, wait: float) -> CliError:
        """Translate a socket-level failure into a message naming the URL
        and, where it helps, how to start the system."""
        if isinstance(reason, TimeoutError):
            return CliError(
                f"timed out after {wait:g}s waiting for {target};"
                " the gateway or a backend service may be overloaded or down"
            )
        if isinstance(reason, ConnectionRefusedError):
            return CliError(f"cannot connect to {target}: connection refused; {START_HINT}")
        text = getattr(reason, "strerror", None) or str(reason)
        if isinstance(reason, socket.gaierror):  # unknown host name
            return CliError(f"cannot reach {target}: {text}; check -u/--api-url or TRUSTGRAPH_URL")
        return CliError(f"cannot reach {target}: {text}; {START_HINT}")

    def config(self, body: dict[str, Any]) -> dict[str, Any]:
        """Call the global ``config`` service."""
        return self.post("api/v1/config", body)

    def flow(self, body: dict[str, Any]) -> dict[str, Any]:
        """Call the global ``flow`` service (keys are kebab-case on REST)."""
        return self.post("api/v1/flow", body)

    def fetch(self, path: str, timeout: float | None = None) -> Any:
        """GET ``{url}{path}`` (``path`` may be ``""``) and return the ``requests`` response,
        whatever its status, for a caller that reads the status itself; no reply at all is a
        :class:`CliError` naming the URL."""
        headers = {"Accept": "application/json", "User-Agent": "trustgraph-cli"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        wait = self.timeout if timeout is None else timeout
        return self._send("GET", self.url + path.lstrip("/"), wait, headers)

    def get(self, path: str) -> Any | None:
        """GET ``{url}{path}`` as JSON; None when the gateway does not serve it (an older one).

        For the endpoints of ours that an upstream gateway lacks, where the
        caller has a fallback: any failure other than a refused token is None.
        """
        try:
            response = self.fetch(path)
        except CliError:
            return None
        if response.status_code == 401:
            raise self._unauthorized()
        if response.status_code != 200:
            return None
        try:
            return json.loads(response.content.decode("utf-8"))
        except ValueError:
            return None


def _chain(e: BaseException) -> list[BaseException]:
    """``e`` and what it wraps: requests wraps urllib3's errors, which wrap the socket's."""
    seen: list[BaseException] = []
    todo: list[BaseException | None] = [e]
    while todo:
        x = todo.pop(0)
        if x is None or any(x is y for y in seen):
            continue
        seen.append(x)
        todo += [getattr(x, "reason", None), x.__cause__, x.__context__,
                 *(a for a in x.args if isinstance(a, BaseException))]
    return seen


def os_cause(e: BaseException) -> OSError | None:
    """The socket-level failure behind a ``requests`` connection error (refused, unknown host,
    reset...), if any: what a command's one line names."""
    for x in _chain(e):
        if isinstance(x, socket.gaierror | ConnectionRefusedError | TimeoutError):
            return x
    for x in _chain(e):
        if isinstance(x, OSError) and x.errno is not None:
            return x
    return None


def _innermost(e: BaseException) -> BaseException:
    return _chain(e)[-1]


def config_values(api: GatewayClient, ctype: str) -> dict[str, str]:
    """``getvalues`` of one config type as ``{key: raw value}``."""
    reply = api.config({"operation": "getvalues", "type": ctype})
    return {v["key"]: v["value"] for v in reply.get("values") or [] if isinstance(v, dict) and "key" in v}


# ---------------------------------------------------------------- argparse


def make_parser(prog: str, description: str | None) -> argparse.ArgumentParser:
    """An ArgumentParser with the flags every command shares.  ``prog`` is
    passed explicitly because under ``python -m`` argv[0] is a file path."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    add_api_args(parser)
    return parser


def add_api_args(parser: argparse.ArgumentParser) -> None:
    """Add ``-u/--api-url`` and ``-t/--token`` (env-var defaults as
    upstream)."""
    parser.add_argument(
        "-u",
        "--api-url",
        default=default_url(),
        help=f"API URL (default: $TRUSTGRAPH_URL or {DEFAULT_URL})",
    )
    parser.add_argument(
        "-t",
        "--token",
        default=default_token(),
        help="API bearer token (default: $TRUSTGRAPH_TOKEN)",
    )


def number(kind: type[int] | type[float] = float, minimum: float = 0, exclusive: bool = True) -> Callable[[str], Any]:
    """An argparse ``type=`` for a number above ``minimum`` (at least it, when not ``exclusive``):
    a refused value is a usage error naming the bound, not a traceback."""
    bound = f"more than {minimum:g}" if exclusive else f"at least {minimum:g}"

    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not {'a whole number' if kind is int else 'a number'}: "
                                             f"{text!r}") from None
        if value != value or value < minimum or (exclusive and value == minimum):  # NaN too
            raise argparse.ArgumentTypeError(f"must be {bound}, got {text}")
        return value
    return parse


def api_from_args(args: argparse.Namespace) -> GatewayClient:
    """Build the client from the shared flags."""
    return GatewayClient(args.api_url, args.token)


def add_item_args(parser: argparse.ArgumentParser, with_key: bool = True) -> None:
    """Add ``--type`` (and ``--key``) plus an optional positional
    ``TYPE/KEY`` (or ``TYPE``) shorthand; resolve with :func:`resolve_item`."""
    parser.add_argument(
        "item",
        nargs="?",
        metavar="TYPE/KEY" if with_key else "TYPE",
        help=(
            "the item as TYPE/KEY (alternative to --type and --key)"
            if with_key
            else "the configuration type (alternative to --type)"
        ),
    )
    parser.add_argument("--type", help="configuration type, e.g. tool")
    if with_key:
        parser.add_argument("--key", help="configuration key within the type")


def resolve_item(
    parser: argparse.ArgumentParser, args: argparse.Namespace, with_key: bool = True
) -> tuple[str, str]:
    """Return ``(type, key)`` from either the positional form or the flags,
    reporting a usage error (exit 2) when they are missing or conflict.
    ``key`` is ``""`` when ``with_key`` is false."""
    ctype: str | None = args.type
    key: str | None = getattr(args, "key", None) if with_key else ""
    if args.item is not None:
        if ctype is not None or (with_key and key is not None):
            flags = "--type/--key" if with_key else "--type"
            parser.error(f"give either {args.item!r} or {flags}, not both")
        if with_key:
            ctype, sep, key = args.item.partition("/")
            if not sep:
                parser.error(f"expected TYPE/KEY (e.g. tool/tell-joke), got {args.item!r}")
        else:
            ctype = args.item
    if not ctype:
        parser.error("the configuration type is required (--type or TYPE/KEY)")
    if with_key and not key:
        parser.error("the configuration key is required (--key or TYPE/KEY)")
    return ctype, key or ""


# ---------------------------------------------------------------- running


def fail(prog: str, message: str, code: int = 1) -> NoReturn:
    """Print the single ``prog: error: ...`` line on stderr and exit."""
    # stdout may already be gone (closed pipe); the error line still matters.
    with contextlib.suppress(OSError, ValueError):
        sys.stdout.flush()
    # Never the token, nor credentials in a URL the user gave (scrub).
    print(f"{prog}: error: {scrub(_one_line(message), [default_token()])}", file=sys.stderr, flush=True)
    sys.exit(code)


def main_wrapper(prog: str, fn: Callable[[], None]) -> None:
    """Run a command body, turning every failure into one stderr line and a
    nonzero exit status.  ``SystemExit`` (argparse usage errors, ``--help``)
    passes through untouched."""
    try:
        fn()
        sys.stdout.flush()
    except CliError as e:
        fail(prog, str(e) or "failed", e.status)
    except KeyboardInterrupt:
        fail(prog, "interrupted", 130)
    except BrokenPipeError:
        # The reader (e.g. ``| head``) went away; nothing useful to print to
        # stdout, and Python would otherwise complain again at shutdown.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        sys.exit(1)
    except Exception as e:  # noqa: BLE001 - the point is to catch everything
        fail(prog, f"unexpected {type(e).__name__}: {e}")
