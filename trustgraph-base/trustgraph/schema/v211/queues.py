"""2.11's queue names (``class:topicspace:topic``) and the Pulsar topics they map to.

Upstream 2.11 names a queue by its class (``flow``, ``request``, ``response``
or ``notify``), a topicspace (``tg``) and a topic, and its Pulsar backend maps
``flow`` to ``persistent://`` and the other three to ``non-persistent://``,
as ``{persistence}://{topicspace}/{class}/{topic}``
(trustgraph-base 2.11.1 ``schema/core/topic.py`` and
``base/async_pulsar_backend.py``).  Workspace-scoped queues append
``:<workspace>`` to the topic (``request:tg:config:default``).

Note that 2.11's config request and response queues map to the very topics
2.1 uses for config (``non-persistent://tg/request/config``), while 2.11's
pushes go to a new one (``non-persistent://tg/notify/config``).

These constants live here until ``trustgraph.topics``, which will hold every
2.11 queue name, takes them over.
"""

from __future__ import annotations

_PERSISTENCE = {"flow": "persistent", "request": "non-persistent", "response": "non-persistent",
                "notify": "non-persistent"}

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


class QueueError(ValueError):
    """A string that is neither a 2.11 queue name nor a Pulsar topic URL."""


def queue(topic: str, cls: str = "flow", topicspace: str = "tg") -> str:
    """The 2.11 queue name ``cls:topicspace:topic`` (upstream's ``schema.queue``)."""
    return f"{cls}:{topicspace}:{topic}"


def workspace_queue(base: str, workspace: str) -> str:
    """A workspace's own queue of a service: ``base:workspace``."""
    return f"{base}:{workspace}"


def to_pulsar(name: str) -> str:
    """The Pulsar topic of a 2.11 queue name; a Pulsar URL passes through unchanged."""
    if "://" in name:
        return name
    parts = name.split(":", 2)
    if len(parts) != 3 or not all(parts):
        raise QueueError(f"{name!r} is not a 2.11 queue name: expected class:topicspace:topic")
    cls, topicspace, topic = parts
    persistence = _PERSISTENCE.get(cls)
    if persistence is None:
        raise QueueError(f"{name!r} is not a 2.11 queue name: its class {cls!r} is not one of "
                         f"{', '.join(_PERSISTENCE)}")
    return f"{persistence}://{topicspace}/{cls}/{topic}"


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
