"""The processes ``tg-launch`` runs, as data.

Each component is a console script and its arguments; ``{placeholders}`` are
filled from the launch settings.  Adding a processor to the stack is adding a
line here, not writing code.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Component:
    name: str                      # what --no-<name> refers to
    command: str                   # console script
    args: tuple[str, ...] = ()
    listens: str = ""              # shown to the user once ready
    llm: str | None = None         # only started when the chosen LLM is this one
    env: dict[str, str] = field(default_factory=dict)


COMPONENTS: tuple[Component, ...] = (
    Component("config-svc", "config-svc", ("--store", "{data_dir}/config.db"),
              listens="store {data_dir}/config.db"),
    Component("api-gateway", "api-gateway", ("--port", "{gateway_port}"),
              listens="http://localhost:{gateway_port}/"),
    Component("prompt", "prompt-template", ("--concurrency", "4")),
    Component("llm", "text-completion-llamacpp", (), listens="embedded SmolLM2-135M-Instruct",
              llm="embedded"),
    Component("llm", "text-completion-openai", (), listens="{openai_url}", llm="openai"),
    Component("llm", "text-completion-scripted", ("--script", "{llm_script}"),
              listens="scripted test model {llm_script}", llm="scripted"),
    Component("agent", "agent-manager-react", ()),
    Component("joke-service", "joke-service", (), listens="non-persistent://tg/request/joke"),
)

# config-svc must be up (and bootstrapped) before the rest start.
FIRST = "config-svc"


def choose_llm(flag: str | None) -> str:
    """The LLM flag wins; else an OpenAI-compatible server when one is configured."""
    if flag:
        return flag
    if os.environ.get("OPENAI_BASE_URL") or os.environ.get("OPENAI_TOKEN"):
        return "openai"
    return "embedded"
