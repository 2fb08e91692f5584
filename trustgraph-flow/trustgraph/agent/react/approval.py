"""Approval of a tool call: the paused dialog as a signed token, and resuming it from one.

When the agent's decided call is of a tool that needs a person's approval
(``tool-policy/approval``, :mod:`trustgraph.catalog.policy`), the dialog ends
with the outcome ``approval-required`` instead of the call
(``agent_manager``).  Nothing of it is kept on the server: the token the
caller gets is the paused dialog itself (question, user, state, group, the
history so far and each failed step's kind, the pending tool, arguments and
thought, the step number, when it expires and a random nonce), compressed and
signed with HMAC-SHA256 under the agent's approval key, so any replica that
holds the key can resume it and nothing has to be stored or cleaned up for a
caller who never answers.

The caller resumes with a new request for the same question that carries
``{"token": ..., "decision": "approve"|"refuse"}`` in the ``approval``
property (``trustgraph.schema.services.agent.APPROVAL``).  :meth:`Approvals.redeem`
checks it before anything runs: the signature (a forged or altered token, or
one signed under another key, is refused), the question and user, the expiry,
and that it was not used before.  A refused approval is one line saying why
(:class:`ApprovalRefused`) and changes nothing: no model step, no call, and
its token is not used up.

Limits, said in docs/governing-tools.md too: a token once used is remembered
(its nonce, until it expires) by the process that took it only, so replicas
and a restarted agent do not know it was used; and without
``--approval-key-file`` each process signs with a key of its own, so a token
does not survive the agent's restart nor reach another replica.  The token is
signed, not encrypted: whoever holds it can read the dialog in it (it is the
caller's own dialog).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import secrets
import time
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trustgraph.base.safety import limits
from trustgraph.schema import AgentRequest, AgentStep, from_dict, to_dict
from trustgraph.schema.services.agent import APPROVE, REFUSE, AgentApproval

#: The token's format; a token of another version is malformed.
VERSION = "a1"
#: The shortest key a ``--approval-key-file`` may hold (tg-launch writes 32 random bytes).
MIN_KEY_BYTES = 16
#: How many bytes of key a process makes for itself when it is given none.
OWN_KEY_BYTES = 32
#: Tokens longer than this are not read (a dialog's history fits many times over).
MAX_TOKEN_CHARS = 1_000_000
#: What a caller sends back: the decision and where its token comes from.
_SEND_BACK = ('send back {"token": ..., "decision": "approve" or "refuse"} with the token of the agent\'s '
              'approval-required answer')


class ApprovalRefused(ValueError):
    """An approval the agent will not act on; ``str()`` says why, in one line, for the caller."""


def read_key(path: str) -> bytes:
    """The approval key in the file at ``path``: its bytes as they are (:class:`ValueError` in one
    line when it cannot be read or is too short to sign with)."""
    try:
        key = Path(path).read_bytes()
    except OSError as e:
        raise ValueError(f"cannot read the approval key file {path}: {e.strerror or e} (give "
                         "--approval-key-file a readable file of random bytes)") from None
    if len(key) < MIN_KEY_BYTES:
        raise ValueError(f"the approval key file {path} holds {len(key)} byte(s); an approval key needs at least "
                         f"{MIN_KEY_BYTES} (e.g. head -c 32 /dev/urandom > {path})")
    return key


@dataclass(frozen=True)
class Paused:
    """A dialog stopped before a call that needs approval, as its token holds it."""

    question: str
    user: str
    state: str
    group: list[str] | None
    history: list[AgentStep]
    failures: dict[int, str]        # the failure kind of each failed step of ``history``
    tool: str
    arguments: dict[str, Any]
    thought: str
    expires: float                  # UNIX time
    nonce: str

    @property
    def step(self) -> int:
        """The step the call belongs to (1 for the dialog's first)."""
        return len(self.history) + 1

    def request(self, streaming: bool) -> AgentRequest:
        """The dialog's request at that step, answered streamed or not as the resuming caller asks."""
        return AgentRequest(question=self.question, state=self.state, group=self.group, history=list(self.history),
                            user=self.user, streaming=streaming)


@dataclass(frozen=True)
class Resume:
    """A checked approval: the paused dialog and the caller's decision (``APPROVE`` or ``REFUSE``)."""

    paused: Paused
    decision: str

    @property
    def approved(self) -> bool:
        return self.decision == APPROVE


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Approvals:
    """Issues and redeems one agent process's approval tokens.

    ``key``: the approval key's bytes (``--approval-key-file``); None makes a random one for
    this process (:attr:`own_key`).  ``clock``: the time, for tests.  The nonces of the tokens
    redeemed are kept until their tokens expire: a token is used once per process.
    """

    def __init__(self, key: bytes | None = None, clock: Callable[[], float] = time.time) -> None:
        self.own_key = key is None
        self._key = secrets.token_bytes(OWN_KEY_BYTES) if key is None else bytes(key)
        self.clock = clock
        self._used: dict[str, float] = {}

    def __repr__(self) -> str:   # never the key
        return f"Approvals(own_key={self.own_key}, used={len(self._used)})"

    def _mac(self, signed: bytes) -> bytes:
        return hmac.new(self._key, signed, hashlib.sha256).digest()

    def issue(self, request: AgentRequest, failures: Mapping[int, str], tool: str, arguments: Mapping[str, Any],
              thought: str, expires_in: float) -> AgentApproval:
        """The approval a dialog paused at ``request`` (its history so far) before calling ``tool``
        with ``arguments`` ends with: the call, its token, and when the token expires."""
        expires = round(self.clock() + expires_in, 3)
        payload = {"question": request.question, "user": request.user, "state": request.state or "",
                   "group": request.group, "history": [to_dict(h) for h in request.history or []],
                   "failures": {str(i): kind for i, kind in sorted(failures.items())}, "tool": tool,
                   "arguments": dict(arguments), "thought": thought, "step": len(request.history or []) + 1,
                   "expires": expires, "nonce": secrets.token_urlsafe(16)}
        body = _b64(zlib.compress(json.dumps(payload, separators=(",", ":"), default=str).encode("utf-8"), 9))
        signed = f"{VERSION}.{body}"
        token = f"{signed}.{_b64(self._mac(signed.encode('ascii')))}"
        return AgentApproval(tool=tool, arguments=dict(arguments), token=token, expires=expires)

    def redeem(self, raw: str, request: AgentRequest) -> Resume:
        """The dialog an ``approval`` property (``raw``, JSON text) resumes, for ``request`` (the
        resuming request: same question and user), or :class:`ApprovalRefused` saying why.

        Only a good approval is used up (its nonce remembered): a refused one changes nothing."""
        now = self.clock()
        for nonce in [n for n, until in self._used.items() if until < now]:
            del self._used[nonce]   # expired: refused as such from now on
        token, decision = self._read(raw)
        paused = self._verify(token)
        if paused.question != request.question:
            raise ApprovalRefused("the approval is for another question: resume with the question the agent "
                                  "asked approval for, unchanged")
        if paused.user != (request.user or ""):
            raise ApprovalRefused("the approval is for another user: only the user the agent asked may answer it")
        if now > paused.expires:
            raise ApprovalRefused("the approval expired: ask again")
        if paused.nonce in self._used:
            raise ApprovalRefused("the approval was already used: ask again")
        self._used[paused.nonce] = paused.expires
        return Resume(paused, decision)

    @staticmethod
    def _read(raw: str) -> tuple[str, str]:
        """The token and decision of an ``approval`` property."""
        try:
            value = limits.loads(raw)
        except ValueError as e:
            raise ApprovalRefused(f"the approval is malformed: not JSON ({e}); {_SEND_BACK}") from None
        if not isinstance(value, dict):
            raise ApprovalRefused(f"the approval is malformed: not an object; {_SEND_BACK}")
        token, decision = value.get("token"), value.get("decision")
        if not isinstance(token, str) or not token:
            raise ApprovalRefused(f"the approval is malformed: it has no token; {_SEND_BACK}")
        if decision not in (APPROVE, REFUSE):
            raise ApprovalRefused(f"the approval is malformed: its decision is {json.dumps(decision)[:40]}, not "
                                  f"\"approve\" or \"refuse\"; {_SEND_BACK}")
        return token, decision

    def _verify(self, token: str) -> Paused:
        """The paused dialog a token holds, once its signature is this key's."""
        parts = token.split(".") if len(token) <= MAX_TOKEN_CHARS else []
        if len(parts) != 3 or parts[0] != VERSION:
            raise ApprovalRefused("the approval is malformed: its token is not one of the agent's approval tokens; "
                                  f"{_SEND_BACK}")
        try:
            mac = _unb64(parts[2])
        except (binascii.Error, ValueError):
            mac = b""
        if not hmac.compare_digest(mac, self._mac(f"{parts[0]}.{parts[1]}".encode("ascii", "replace"))):
            raise ApprovalRefused("the approval's token was not signed by this agent (forged or altered, or signed "
                                  "under another approval key: an agent restarted without --approval-key-file, or "
                                  "a replica with a key of its own): ask again")
        try:   # signed by us: what follows reads our own writing (a failure is our bug or an old format)
            data = json.loads(zlib.decompress(_unb64(parts[1])))
            history = [from_dict(AgentStep, h) for h in data["history"]]
            paused = Paused(question=data["question"], user=data["user"], state=data["state"], group=data["group"],
                            history=history, failures={int(k): v for k, v in data["failures"].items()},
                            tool=data["tool"], arguments=dict(data["arguments"]), thought=data["thought"],
                            expires=float(data["expires"]), nonce=data["nonce"])
        except (ValueError, TypeError, KeyError, AttributeError, zlib.error) as e:
            raise ApprovalRefused(f"the approval is malformed: its token cannot be read ({e}): ask again") from None
        if paused.step != data.get("step"):
            raise ApprovalRefused("the approval is malformed: its token's step does not match its history: ask again")
        return paused
