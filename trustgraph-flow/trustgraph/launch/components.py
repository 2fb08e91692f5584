"""The processes ``tg-launch`` runs, as data.

Each component is a console script and its arguments; ``{placeholders}`` are
filled from the launch settings.  Adding a processor to the stack is adding a
line here, not writing code; a tool service is not listed here at all: it
registers itself (``tool_services``), and takes its place after the agent.
"""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .tool_services import registered


@dataclass(frozen=True)
class Component:
    name: str                      # what --no-<name> refers to
    command: str                   # console script
    args: tuple[str, ...] = ()
    listens: str = ""              # shown to the user once ready
    llm: str | None = None         # only started when the chosen LLM is this one
    env: dict[str, str] = field(default_factory=dict)
    # tg-launch flags passed through as the same flag when given (dest names).
    options: tuple[str, ...] = ()
    # The stack is useless without it: when it cannot be kept up, tg-launch
    # stops everything and exits nonzero instead of limping on.
    essential: bool = False
    # The secret environment variables it needs (trustgraph.base.safety.secrets):
    # every other secret of tg-launch's environment is kept from it.
    secrets: tuple[str, ...] = ()


#: Every processor talks to the broker, with Pulsar token auth when one is set (RabbitMQ's password:
#: tg-launch hands it to each child itself, ``launcher.Launcher.broker_args``).
BROKER_SECRETS = ("PULSAR_API_KEY",)
#: Proxies (which may carry credentials) for the components that call out over HTTP.
OUTBOUND = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")


#: The framework's own components (the tool services register themselves).
FRAMEWORK: tuple[Component, ...] = (
    Component("config-svc", "config-svc", ("--store", "{data_dir}/config.db"),
              listens="store {data_dir}/config.db", essential=True),
    Component("api-gateway", "api-gateway",
              ("--port", "{gateway_port}", "--host", "{host}", "--pulsar-admin-url", "{pulsar_admin_url}",
               "--stack-status", "{stack_status}"),
              listens="http://{gateway_host}:{gateway_port}/", essential=True, secrets=("GATEWAY_SECRET",)),
    Component("prompt", "prompt-template", ("--concurrency", "4", "--pulsar-admin-url", "{pulsar_admin_url}")),
    Component("llm", "text-completion-llamacpp", (), listens="embedded {llm_model}",
              llm="embedded", options=("model",)),
    Component("llm", "text-completion-openai", (), listens="{openai_url}", llm="openai",
              secrets=("OPENAI_TOKEN", "OPENAI_BASE_URL", *OUTBOUND)),
    Component("llm", "text-completion-scripted", ("--script", "{llm_script}"),
              listens="scripted test model {llm_script}", llm="scripted"),
    Component("agent", "agent-manager-react", ("--pulsar-admin-url", "{pulsar_admin_url}",
                                              "--approval-key-file", "{approval_key}"),
              options=("max_iterations", "tool_timeout", "min_confidence", "tie_ratio", "ranker_lead", "model_sure",
                       "argument_check")),
    Component("mcp-tool", "mcp-tool", (), listens="calls tools of the servers in config type mcp",
              secrets=OUTBOUND),
    # The gateway's secret opens mcp-server too (either token does).
    Component("mcp-server", "mcp-server", ("--port", "{mcp_port}", "--host", "{mcp_host}"),
              listens="http://{mcp_shown}:{mcp_port}/mcp (our tools, for MCP clients)",
              secrets=("MCP_SERVER_TOKEN", "GATEWAY_SECRET")),
)


def tool_service_components() -> tuple[Component, ...]:
    """A component for each registered tool service (``tool_services``): its console script,
    no arguments, the broker's secrets only.  A registered name that is one of the framework's
    components is left out: the framework's own keeps it."""
    own = {c.name for c in FRAMEWORK}
    return tuple(Component(s.name, s.name, (), listens=s.listens()) for s in registered() if s.name not in own)


#: The stack: the framework's components, the registered tool services after the agent.
_AFTER = next(i for i, c in enumerate(FRAMEWORK) if c.name == "agent") + 1
COMPONENTS: tuple[Component, ...] = (*FRAMEWORK[:_AFTER], *tool_service_components(), *FRAMEWORK[_AFTER:])

# config-svc must be up (and bootstrapped) before the rest start.
FIRST = "config-svc"


class ComponentError(ValueError):
    """A component definition file is unusable."""


def load_components(path: str | os.PathLike) -> tuple[Component, ...]:
    """Component definitions from a JSON file: a list of objects with the fields
    of ``Component`` (``name`` and ``command`` required, ``args`` a list).

    Only tg-launch's hidden ``--extra-components`` test hook reads such a file,
    so that a test can run a stand-in processor under the real launcher.
    """
    # pydantic is imported here, not with the module: tg-launch's start-up does not load it.
    from pydantic import ValidationError

    try:
        items = json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        raise ComponentError(f"cannot read component definitions {path}: {e}") from e
    if not isinstance(items, list):
        raise ComponentError(f"{path}: expected a JSON list of component objects")
    spec = _component_spec()
    out = []
    for i, item in enumerate(items):
        try:
            checked = spec.model_validate(item)
        except ValidationError as e:
            raise ComponentError(f"{path}: item {i} {_problem(e)}") from None
        out.append(Component(**{**checked.model_dump(), "args": tuple(checked.args),
                                "options": tuple(checked.options), "secrets": tuple(checked.secrets)}))
    return tuple(out)


def _component_spec() -> type:
    """The pydantic model of one definition: ``Component``'s fields, JSON's types, no others."""
    from pydantic import ConfigDict, StrictBool, StrictStr, create_model

    types = {"name": StrictStr, "command": StrictStr, "args": list[StrictStr], "listens": StrictStr,
             "llm": StrictStr | None, "env": dict[str, StrictStr], "options": list[StrictStr],
             "essential": StrictBool, "secrets": list[StrictStr]}
    def default(f: dataclasses.Field) -> Any:
        if f.name in ("name", "command"):
            return ...   # required
        value = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
        return list(value) if isinstance(value, tuple) else value

    fields = {f.name: (types[f.name], default(f)) for f in dataclasses.fields(Component)}
    return create_model("ComponentSpec", __config__=ConfigDict(extra="forbid"), **fields)


def _problem(e: Any) -> str:
    """What is wrong with one definition, in words (after "item N")."""
    errors = e.errors()
    if errors and errors[0]["type"] == "model_type":
        return 'must be a JSON object with at least "name" and "command"'
    unknown = sorted(str(err["loc"][0]) for err in errors if err["type"] == "extra_forbidden")
    if unknown:
        return f"has unknown fields {unknown}"
    if any(err["type"] == "missing" for err in errors):
        return 'needs at least "name" and "command"'
    err = errors[0]
    where = ".".join(str(part) for part in err["loc"])
    return f"field {where!r}: {err['msg'][:1].lower()}{err['msg'][1:]}"


def with_extra(base: tuple[Component, ...], extra: tuple[Component, ...]) -> tuple[Component, ...]:
    """``base`` with every component named in ``extra`` replaced (all its LLM
    variants too), and the new names appended."""
    names = {c.name for c in extra}
    return tuple(c for c in base if c.name not in names) + extra


#: What the embedded LLM's status line names when no --model is given.
DEFAULT_MODEL = "SmolLM2-135M-Instruct"


def choose_llm(flag: str | None, model: str | None = None) -> str:
    """The LLM flag wins, then a GGUF file given with --model (the embedded LLM runs it);
    else an OpenAI-compatible server when one is configured."""
    if flag:
        return flag
    if model:
        return "embedded"
    if os.environ.get("OPENAI_BASE_URL") or os.environ.get("OPENAI_TOKEN"):
        return "openai"
    return "embedded"
