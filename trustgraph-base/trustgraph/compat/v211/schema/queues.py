"""2.11's well-known queues and workspaces, named as 2.11 names them.

The grammar itself (``class:topicspace:topic`` and its Pulsar topics) is
:mod:`trustgraph.topics`', the one place topics are parsed; this module names
what 2.11 calls its config and flow queues, its workspaces, and the config type
of a processor's flows (trustgraph-base 2.11.1 ``schema/config.py``,
``schema/core/topic.py``; trustgraph-flow 2.11.1 ``flow/service/flow.py``).
Workspace-scoped queues append ``:<workspace>`` to the topic
(``request:tg:config:default``).

Note that 2.11's config request and response queues map to the very topics
2.1 uses for config (``non-persistent://tg/request/config``), while 2.11's
pushes go to a new one (``non-persistent://tg/notify/config``).
"""

from __future__ import annotations

from trustgraph.topics import TopicError, queue, to_pulsar

#: What :func:`to_pulsar` raises for a name that is no topic (2.11's or 2.1's).
QueueError = TopicError

#: The workspace 2.1's view of the config is (and the only one our processors follow).
DEFAULT_WORKSPACE = "default"
#: The reserved workspace listing the workspaces, as items of type :data:`WORKSPACE_TYPE`.
WORKSPACES = "__workspaces__"
WORKSPACE_TYPE = "workspace"
#: 2.11's config type of one processor's flows: this prefix and the processor's id
#: (its flow service writes them, its FlowProcessor reads them).
PROCESSOR_TYPE_PREFIX = "processor:"
#: Workspaces whose id starts so are storage only: 2.11's config-svc sends no notice of their changes.
RESERVED_PREFIX = "_"
#: The longest workspace name served: it is part of each of the workspace's topic names
#: (upstream's ids are uuids or short words).
MAX_WORKSPACE_NAME = 256


def workspace_queue(base: str, workspace: str) -> str:
    """A workspace's own queue of a service: ``base:workspace``."""
    return f"{base}:{workspace}"


def workspace_problem(workspace: str) -> str | None:
    """Why ``workspace`` cannot be a workspace whose queues are served, or None when it can
    (the reason quotes the name only inside a queue name, so a caller names it once).

    A registered workspace's name becomes part of four topic names
    (``request:tg:config:<workspace>``...): a name the topic grammar refuses
    (a ``/``, white space) or an empty one cannot be served, and a very long
    one would be copied into every topic, notice and log line about it.  It is
    checked when a workspace is registered, so a registration that could not
    be served is refused rather than written.
    """
    if not isinstance(workspace, str) or not workspace:
        return "a workspace needs a name"
    if len(workspace) > MAX_WORKSPACE_NAME:
        return f"its name is {len(workspace):,} characters long, over the limit of {MAX_WORKSPACE_NAME:,}"
    for base in (config_request_queue, config_response_queue, flow_request_queue, flow_response_queue):
        name = workspace_queue(base, workspace)
        try:
            to_pulsar(name)
        except TopicError:
            return (f"its name cannot be part of a topic ({name!r} is not one): use a name without '/' "
                    "or white space")
    return None


def processor_type(processor: str) -> str:
    """The config type holding ``processor``'s flows in 2.11: ``processor:<id>``."""
    return f"{PROCESSOR_TYPE_PREFIX}{processor}"


def is_reserved(workspace: str) -> bool:
    """Whether a workspace is storage only (``__workspaces__``, ``__template__``)."""
    return workspace.startswith(RESERVED_PREFIX)


# Upstream's names of the global queues (its ``schema.config_request_queue``...) ...
config_request_queue = queue("config", cls="request")
config_response_queue = queue("config", cls="response")
config_push_queue = queue("config", cls="notify")
#: 2.11's flow service serves only workspace queues: ``workspace_queue(flow_request_queue, ws)``.
flow_request_queue = queue("flow", cls="request")
flow_response_queue = queue("flow", cls="response")

# ... and the Pulsar topics of the system config queues, where every 2.11 processor fetches
# (naming the workspace in the request) and where config-svc sends its change notices.
CONFIG_REQUEST = to_pulsar(config_request_queue)
CONFIG_RESPONSE = to_pulsar(config_response_queue)
CONFIG_NOTIFY = to_pulsar(config_push_queue)
