"""The tool services tg-launch runs beside the stack: registered, and found, not listed by hand.

A tool service registers itself in the ``trustgraph.tool_services``
entry-point group of its package's ``pyproject.toml``: the entry point's
name is its console script (and the component's name, so ``--no-<name>``
skips it), its value the service's :class:`~trustgraph.base.DynamicToolService`
class::

    [project.scripts]
    joke-service = "trustgraph.tool_service.joke:run"

    [project.entry-points."trustgraph.tool_services"]
    joke-service = "trustgraph.tool_service.joke:Processor"

tg-launch adds a component for each (``components.COMPONENTS``, after the
agent); the launcher's tests (the secrets each child gets, the metrics
servers a stack serves) and the test every registered tool service gets
(``tests/unit/test_registered_tool_services.py``) read this same list.

Why entry points rather than a table of them (issue 22): a new service in
the tree then touches only its own files and the ``pyproject.toml`` it
needs for its console script anyway (``tg-new-tool-service`` writes both),
so no shared table or test is edited and none breaks; and a tool service
in a package of its own is registered the same way, so ``make run`` starts
it too once it is installed in the venv.  The list is what is installed:
after adding one, ``make install`` (which the edited ``pyproject.toml``
triggers) registers it.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from trustgraph.topics import tool_service_topics

#: The entry-point group tool services register in.
GROUP = "trustgraph.tool_services"


@dataclass(frozen=True)
class RegisteredService:
    """One registered tool service: its console script (= component name) and its class."""

    name: str
    target: str   # "module:Class", the entry point's value

    def load(self) -> Any:
        """The service class (imports its module)."""
        return EntryPoint(self.name, self.target, GROUP).load()

    def listens(self) -> str:
        """Its request topic, for tg-launch's status line ("" when the class cannot be loaded:
        the process then fails to start and tg-launch names its log)."""
        try:
            topic = self.load().default_topic
        except Exception:   # anything a broken module raises; reported where it runs
            return ""
        return tool_service_topics(topic)[0] if isinstance(topic, str) else ""


def registered() -> tuple[RegisteredService, ...]:
    """Every registered tool service, by name (one entry per name, the first one installed)."""
    found: dict[str, RegisteredService] = {}
    for ep in entry_points(group=GROUP):
        found.setdefault(ep.name, RegisteredService(ep.name, ep.value))
    return tuple(found[name] for name in sorted(found))
