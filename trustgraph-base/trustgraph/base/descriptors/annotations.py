"""What a tool says about its effects: ``read-only``, ``destructive``, ``idempotent``, ``open-world``.

Four booleans a ``tool`` descriptor, a ``tool-service`` descriptor and a
service's declared tools may carry, as MCP's tool annotations do
(``readOnlyHint``, ``destructiveHint``, ``idempotentHint``,
``openWorldHint``: :data:`MCP_HINTS`):

* ``read-only``: the tool does not change its environment;
* ``destructive``: it may change or delete what was there (not only add);
* ``idempotent``: calling it again with the same arguments has no further
  effect, so a caller may retry a call that timed out;
* ``open-world``: it reaches things outside the deployment (the web, other
  people's systems), not only a closed world of its own.

An annotation nobody gave is *unknown* (None), never filled in: a descriptor
written without them, an upstream one among them, says nothing, and nothing
of ours claims for it that it is safe.  Where a decision needs a yes or no
(:meth:`Annotations.assumed`), an unknown reads as MCP's own default, which is
the worst case (:data:`ASSUMED`: not read-only, destructive, not idempotent,
open-world; a read-only tool is not destructive), and MCP clients read an
annotation we do not send the same way.
One exception keeps what callers did before: retries follow ``idempotent``
alone, so an idempotent tool that does not say it is destructive is retried
(:attr:`Annotations.retries`); one that says ``destructive: true`` never is.

A tool's own annotations win over its service's (:meth:`Annotations.over`):
a service says what holds for its tools as a rule (``idempotent`` was, and
stays, a service's field), a tool what holds for it.  A ``tool-service``
descriptor that says nothing of ``idempotent`` is not idempotent, as before.

This module is stdlib only, so a command or a listing can read annotations
without the descriptor models.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

READ_ONLY = "read-only"
DESTRUCTIVE = "destructive"
IDEMPOTENT = "idempotent"
OPEN_WORLD = "open-world"

#: Every annotation's descriptor key, in the order they are shown.
KEYS = (READ_ONLY, DESTRUCTIVE, IDEMPOTENT, OPEN_WORLD)

#: Each annotation's name in MCP (the ``annotations`` of a listed tool).
MCP_HINTS: Mapping[str, str] = {READ_ONLY: "readOnlyHint", DESTRUCTIVE: "destructiveHint",
                                IDEMPOTENT: "idempotentHint", OPEN_WORLD: "openWorldHint"}

#: How MCP reads a hint a server did not give: the worst case.  Ours read an unknown one the
#: same way wherever a decision needs a yes or no.
ASSUMED: Mapping[str, bool] = {READ_ONLY: False, DESTRUCTIVE: True, IDEMPOTENT: False, OPEN_WORLD: True}

#: Why ``read-only`` and ``destructive`` cannot both be true (MCP: destructive is only meaningful
#: for a tool that is not read-only).
CONTRADICTION = "a read-only tool cannot be destructive: say which it is"


def _attribute(key: str) -> str:
    return key.replace("-", "_")


@dataclass(frozen=True)
class Annotations:
    """A tool's (or service's) four annotations; None: not given."""

    read_only: bool | None = None
    destructive: bool | None = None
    idempotent: bool | None = None
    open_world: bool | None = None

    def get(self, key: str) -> bool | None:
        """One annotation by its descriptor key (``"read-only"``)."""
        return getattr(self, _attribute(key))

    def said(self) -> dict[str, bool]:
        """The annotations given, by descriptor key (what a descriptor or a listing carries)."""
        return {k: v for k in KEYS if (v := self.get(k)) is not None}

    @classmethod
    def from_said(cls, said: Mapping[str, Any]) -> Annotations:
        """The annotations :meth:`said` gave (``{"read-only": true}``, as the catalog's JSON lists them);
        a value that is not a boolean is unknown."""
        return cls(**{_attribute(k): v for k in KEYS if isinstance(v := said.get(k), bool)})

    def assumed(self, key: str) -> bool:
        """The annotation as given, else MCP's worst-case default (:data:`ASSUMED`); a read-only tool
        is not destructive (MCP: ``destructiveHint`` means something only for one that is not)."""
        value = self.get(key)
        if value is None and key == DESTRUCTIVE and self.read_only is True:
            return False
        return ASSUMED[key] if value is None else value

    @property
    def retries(self) -> bool:
        """Whether a caller may repeat a call that may not have run: it is idempotent, and it
        does not say it is destructive."""
        return self.idempotent is True and self.destructive is not True

    def over(self, base: Annotations) -> Annotations:
        """These annotations, with ``base`` (the service's) where these give none.

        A tool that says it is read-only is not destructive whatever its service says, and one
        that says it is destructive is not read-only: the tool's word wins over its service's.
        """
        merged = replace(self, **{f.name: getattr(base, f.name) for f in fields(self) if getattr(self, f.name) is None})
        if merged.read_only is True and merged.destructive is True:
            merged = replace(merged, destructive=False) if self.read_only is True else replace(merged, read_only=False)
        return merged

    def to_mcp(self) -> dict[str, bool]:
        """The given annotations as MCP's hints (``{"readOnlyHint": true}``); unknown ones are left out,
        so an MCP client reads them as MCP's defaults."""
        return {MCP_HINTS[k]: v for k, v in self.said().items()}

    @classmethod
    def from_mcp(cls, hints: Any) -> Annotations:
        """The annotations of a listed MCP tool: its ``annotations`` as the SDK reads them (an object with
        ``read_only_hint`` ...) or as JSON (``{"readOnlyHint": ...}``).  A hint that is absent, or
        not a boolean (a server not ours may send anything), is unknown."""
        values: dict[str, bool] = {}
        for key, hint in MCP_HINTS.items():
            value = hints.get(hint) if isinstance(hints, Mapping) else getattr(hints, f"{_attribute(key)}_hint", None)
            if isinstance(value, bool):
                values[_attribute(key)] = value
        if values.get("read_only") is True and values.get("destructive") is True:
            # MCP: destructiveHint means something only for a tool that is not read-only.
            del values["destructive"]
        return cls(**values)
