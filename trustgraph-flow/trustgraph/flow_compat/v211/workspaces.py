"""Which workspaces config-svc serves on 2.11's wire: names that can be topics, and at most so many.

Under ``--wire 2.11`` every workspace registered in ``__workspaces__`` gets
queues of its own (``request:tg:config:<workspace>``, ``request:tg:flow:<workspace>``
and their responses: two consumers and two producers in config-svc and the
broker, some 85 KB of config-svc's memory and 110 KB of the broker's each, and
a few milliseconds of config-svc's start).  Anyone on the bus may register
one, so what such a put can make config-svc do is bounded here, twice:

* when written (:func:`check_registrations`, on the only path a request
  writes ``__workspaces__`` by: 2.11's ``put``, on the system queue or a
  workspace's own): a name that cannot be a topic
  (:func:`trustgraph.compat.v211.schema.workspace_problem`), or a workspace past
  the cap, refuses the whole put, nothing written;
* when read at start (:func:`servable`): a store written before these checks
  may hold such names, or more workspaces than the cap; those are left
  unserved, each named in a WARNING with what to do, and config-svc starts.
  A name it could not serve used to stop its start, and tg-launch's after
  five tries: for good, until the store was edited by hand.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from trustgraph.base.safety.logsafe import clip
from trustgraph.compat.v211.schema import WORKSPACE_TYPE, WORKSPACES, workspace_problem
from trustgraph.config.service.operations import Refused
from trustgraph.config.service.service import DEFAULT_MAX_WORKSPACES
from trustgraph.config.service.store import DEFAULT_WORKSPACE, ConfigStore

__all__ = ["DEFAULT_MAX_WORKSPACES", "Servable", "check_registrations", "listed", "quoted", "servable",
           "unserved_lines"]

def check_registrations(store: ConfigStore, puts: Iterable[tuple[str, str, str]], workspace: str,
                        max_workspaces: int) -> None:
    """Raise :class:`Refused` when ``puts`` into ``workspace`` register a workspace config-svc
    could not serve: a name that cannot be a topic, or one more than ``max_workspaces``.

    Call it under the store's lock, with the :meth:`ConfigStore.apply` it guards, so that no
    other registration comes in between the count and the write.
    """
    if workspace != WORKSPACES:
        return
    names = [key for type_, key, _value in puts if type_ == WORKSPACE_TYPE]
    for name in names:
        if problem := workspace_problem(name):
            raise Refused(f"nothing written: workspace {quoted(name)} cannot be registered: {problem}")
    if not names:
        return
    registered = set(store.keys(WORKSPACE_TYPE, workspace=WORKSPACES))
    new = set(names) - registered
    if new and len(registered) + len(new) > max_workspaces:
        raise Refused(f"nothing written: config-svc serves at most {max_workspaces:,} workspaces "
                      f"(--max-workspaces), {len(registered):,} registered already, so not {len(new):,} more; "
                      "delete workspaces no longer used, or start config-svc with a higher --max-workspaces")


@dataclass
class Servable:
    """The registered workspaces split by whether config-svc serves them."""

    serve: list[str] = field(default_factory=list)
    #: ``(name, why)`` of each name that cannot be a topic.
    unservable: list[tuple[str, str]] = field(default_factory=list)
    #: Names past the cap, in the order they were left out.
    over: list[str] = field(default_factory=list)


def servable(registered: Iterable[str], max_workspaces: int) -> Servable:
    """Which of the ``registered`` workspaces to serve: those whose names can be topics, the
    default workspace first (2.11 peers and our flow operations use it), at most ``max_workspaces``."""
    names = sorted(set(registered), key=lambda name: (name != DEFAULT_WORKSPACE, name))
    out = Servable()
    for name in names:
        if problem := workspace_problem(name):
            out.unservable.append((name, problem))
        elif len(out.serve) < max_workspaces:
            out.serve.append(name)
        else:
            out.over.append(name)
    return out


def unserved_lines(plan: Servable, max_workspaces: int) -> list[str]:
    """The WARNING lines for what ``plan`` leaves unserved: one per name that cannot be a topic,
    one for the workspaces past the cap; each says what to do."""
    lines = [f"Workspace {quoted(name)}, registered in {WORKSPACES}, is not served: {problem}. Its config "
             "is kept; to serve it, register it under a name that can be a topic, then delete this entry "
             f"(a 2.11 config delete in workspace {WORKSPACES}, type {WORKSPACE_TYPE})"
             for name, problem in plan.unservable]
    if plan.over:
        lines.append(f"{len(plan.over):,} registered workspaces are not served, past config-svc's limit of "
                     f"{max_workspaces:,} (--max-workspaces): {listed(plan.over)}; delete workspaces no "
                     f"longer used from workspace {WORKSPACES}, or start config-svc with a higher "
                     "--max-workspaces")
    return lines


def listed(names: Iterable[str], most: int = 5) -> str:
    """Workspace names for a log line: the first ``most`` quoted, and how many more (a line per
    start must not grow with a thousand workspaces)."""
    names = list(names)
    shown = ", ".join(quoted(name) for name in names[:most])
    return f"{shown} and {len(names) - most:,} more" if len(names) > most else shown or "none"


def quoted(name: str) -> str:
    """A workspace name as a reply or log line quotes it: escaped by ``repr`` and cut to 64 characters."""
    return repr(clip(name, 64))
