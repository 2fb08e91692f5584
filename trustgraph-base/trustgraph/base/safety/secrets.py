"""Secrets: comparing tokens, keeping them out of text, and out of processes that do not need them.

One module decides what counts as a secret, so the gateway, mcp-server, the
commands, the log filter (:mod:`.logsafe`) and tg-launch agree:

* :func:`tokens_match` compares a presented token with the expected one in
  time independent of both (hmac on SHA-256 digests, so not even the length
  leaks), and exactly: nothing is stripped or case-folded;
* :func:`token_problem` refuses a configured token that no client could
  present (HTTP drops whitespace around a header value, RFC 9110 section 5.5,
  and a header cannot carry control characters);
* :func:`scrub` takes credentials out of free text: the password (or bare
  user) of a URL, secret-looking query parameters, the credentials of an
  ``Authorization`` header quoted in the text and of a ``Bearer`` token (a
  server that echoes the request in its error puts them there), and every value
  :func:`remember`-ed by this process; :func:`redact_url` does it for one URL;
* :func:`url_credentials` takes the user and password out of a URL, for a
  client that must send them explicitly (an HTTP library that finds them in
  the URL turns them into a ``Basic`` header of its own, replacing the one
  the caller set);
* :func:`is_secret_env` says which environment variables a child process
  gets only when it needs them (tg-launch grants them per component).
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import re
from collections.abc import Callable, Iterable, Mapping
from urllib.parse import quote, unquote, urlsplit, urlunsplit

MASK = "***"

#: Environment variable names that hold secrets (any case).
_SECRET_NAME = re.compile(
    r"TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|API_?KEY|ACCESS_?KEY|PRIVATE|COOKIE|AUTH_SOCK"
    r"|(?:^|_)KEY$|(?:^|_)PASS$",
    re.IGNORECASE)
#: A variable that is not secret by name but may carry credentials in its URL.
_CREDENTIAL_URLS = frozenset({"OPENAI_BASE_URL"})

_USERINFO = re.compile(r"(?P<scheme>\b[a-z][a-z0-9+.-]*://)(?P<userinfo>[^/?#\s@'\"]+)@", re.IGNORECASE)
_SECRET_PARAM = re.compile(
    r"(?P<name>[?&;](?:[a-z0-9_-]*(?:token|secret|password|passwd|api[_-]?key|access[_-]?key|signature|sig)"
    r"|key|auth|code)=)(?P<value>[^&#\s'\"]+)",
    re.IGNORECASE)

#: An Authorization header quoted in free text (``Authorization: Basic dXNl...``, JSON's
#: ``"authorization": "Bearer ..."``): the label and scheme are kept, the credentials masked.
_AUTH_HEADER = re.compile(r"(?P<label>\bauthorization[\"']?\s*[:=]\s*[\"']?)"
                          r"(?P<scheme>(?:Bearer|Basic|Token|Digest|ApiKey)\s+)?(?P<value>[^\s\"',;&]+)",
                          re.IGNORECASE)
#: A bearer token on its own (``Bearer sk-...``); shorter words after "Bearer" are prose.
_BEARER = re.compile(r"(?P<scheme>\bBearer\s+)(?P<value>[A-Za-z0-9._~+/=-]{8,})")

#: Secrets shorter than this are not searched for in text: masking every "ab"
#: would garble logs, and a token that short protects nothing anyway.
MIN_REMEMBERED = 4

_remembered: set[str] = set()

#: Processor parameters (flag dests) that hold secrets: masked in that process's logs.
SECRET_PARAMS = ("api_key", "api_token", "token", "auth_token", "pulsar_api_key", "loki_password",
                 "cassandra_password", "rabbitmq_password")


def tokens_match(given: str | bytes | None, expected: str | bytes) -> bool:
    """Whether ``given`` is exactly ``expected``, compared in constant time; never true for an empty one."""
    if not expected:
        return False
    a = hashlib.sha256(_bytes(given or b"")).digest()
    b = hashlib.sha256(_bytes(expected)).digest()
    return hmac.compare_digest(a, b) and given is not None


def token_problem(token: str) -> str | None:
    """Why a configured bearer token could never be presented, or None when it can."""
    if token != token.strip():
        return ("it has leading or trailing whitespace, which HTTP removes from a header value, "
                "so no client could send it")
    if any(ord(c) < 0x20 or ord(c) == 0x7f for c in token):
        return "it contains control characters, which an HTTP header cannot carry"
    if not token.isascii():
        return "it contains non-ASCII characters, which HTTP clients do not send alike in a header"
    return None


def token_argument(source: str) -> Callable[[str], str]:
    """An argparse ``type`` for a bearer-token flag: refuses a token :func:`token_problem` finds
    unusable, in one line that names ``source`` (the flag and its variable) and never the token."""
    def check(text: str) -> str:
        problem = token_problem(text) if text else None
        if problem:
            raise argparse.ArgumentTypeError(f"the token from {source} cannot be used: {problem}")
        return text
    check.__name__ = "token"
    return check


def secret_values(params: Mapping[str, object]) -> list[str]:
    """The values of :data:`SECRET_PARAMS` among a processor's parameters."""
    return [v for k in SECRET_PARAMS if isinstance(v := params.get(k), str) and v]


def remember(*values: str | None) -> None:
    """Mask these values wherever :func:`scrub` sees them in this process (logs, error lines)."""
    for v in values:
        if v and len(v) >= MIN_REMEMBERED:
            _remembered.add(v)
            _remembered.add(quote(v, safe=""))


def scrub(text: str, extra: Iterable[str | None] = ()) -> str:
    """``text`` with URL credentials, secret query parameters and known secrets masked."""
    if not text:
        return text
    for secret in sorted({*_remembered, *(e for e in extra if e and len(e) >= MIN_REMEMBERED)},
                         key=len, reverse=True):
        if secret in text:
            text = text.replace(secret, MASK)
    if "://" in text:
        text = _USERINFO.sub(lambda m: f"{m['scheme']}{_masked_userinfo(m['userinfo'])}@", text)
    if "=" in text:
        text = _SECRET_PARAM.sub(lambda m: f"{m['name']}{MASK}", text)
    if "uthoriz" in text or "UTHORIZ" in text:
        text = _AUTH_HEADER.sub(lambda m: f"{m['label']}{m['scheme'] or ''}{MASK}", text)
    if "Bearer" in text:
        text = _BEARER.sub(lambda m: f"{m['scheme']}{MASK}", text)
    return text


def url_credentials(url: str) -> tuple[str, str | None, str | None]:
    """``url`` without its user and password, and those two (unquoted), or None when absent."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url, None, None
    userinfo, _, hostport = parts.netloc.rpartition("@")
    user, sep, password = userinfo.partition(":")
    return (urlunsplit(parts._replace(netloc=hostport)), unquote(user) or None,
            unquote(password) if sep else None)


def redact_url(url: str) -> str:
    """``url`` as it may be shown: no password, token or key in it."""
    return scrub(url)


def is_secret_env(name: str, value: str) -> bool:
    """Whether the variable ``name=value`` holds a secret a child should get only when it needs it."""
    if _SECRET_NAME.search(name) or name.upper() in _CREDENTIAL_URLS:
        return True
    return bool(_USERINFO.search(value)) and ":" in (_USERINFO.search(value)["userinfo"])


def child_environment(environ: Mapping[str, str], grants: Iterable[str] = ()) -> dict[str, str]:
    """``environ`` without its secrets, except the ``grants`` (variable names) the child needs."""
    granted = set(grants)
    return {k: v for k, v in environ.items() if k in granted or not is_secret_env(k, v)}


def _masked_userinfo(userinfo: str) -> str:
    user, sep, _password = userinfo.partition(":")
    # "https://TOKEN@host" is a common way to send a token as the user name.
    return f"{user}:{MASK}" if sep else MASK


def _bytes(value: str | bytes) -> bytes:
    return value if isinstance(value, bytes) else value.encode("utf-8", "surrogatepass")
