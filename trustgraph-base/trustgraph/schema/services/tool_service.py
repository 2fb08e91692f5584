"""Dynamic tool-service records (e.g. the joke service)."""

from dataclasses import dataclass

from ..core.primitives import Error

#: Ours, a message property of a tool-service request: ``"true"`` when the caller reads a
#: streamed answer (several responses, ``end_of_stream`` on the last).  A streaming service
#: answers a request without it with one response holding all its chunks joined, because
#: upstream's callers (2.1.4's agent, 2.11.1's ``RequestResponseClient.request()``) take the
#: first response as the whole answer and would get the first chunk only.  A property, so the
#: records stay upstream's: upstream's services ignore it (they never stream), and upstream's
#: callers never set it.
READS_STREAMS = "reads-streams"


@dataclass
class ToolServiceRequest:
    """Invocation of a tool service; ``config`` and ``arguments`` hold JSON text."""

    user: str = ""
    config: str = ""
    arguments: str = ""


@dataclass
class ToolServiceResponse:
    """Tool-service result; ``response`` is text (non-strings are JSON-encoded)."""

    error: Error | None = None
    response: str = ""
    end_of_stream: bool = False


@dataclass
class ToolServiceAnnouncement:
    """A running tool service saying what it offers (a heartbeat), or that it stops.

    Our extension (upstream 2.1.4 has no such record), published on its own
    topic, so upstream peers never see it.  ``descriptor`` is the JSON text
    of the service's ``tool-service`` descriptor and ``tools`` of
    ``{tool key: tool descriptor}``; ``service`` is the descriptor's id, shared
    by every ``replica`` (one process each).  A replica counts as live for
    ``lease`` seconds after each ``"up"`` message; ``"down"`` withdraws it at
    once.  ``sent`` is the sender's clock (UNIX seconds), shown to people
    only: liveness is timed on the receiver's own clock.

    Only the replica itself can withdraw itself: each ``"up"`` carries
    ``withdraw_hash``, the SHA-256 (hex) of a secret the replica keeps, and
    its ``"down"`` shows that secret in ``withdraw_key``.  Anyone can read the
    hash on the topic; nobody can work the key out from it.
    """

    service: str = ""
    replica: str = ""
    state: str = "up"
    lease: float = 0.0
    descriptor: str = ""
    tools: str = ""
    sent: float = 0.0
    withdraw_hash: str = ""
    withdraw_key: str = ""


@dataclass
class ToolServiceProbe:
    """Asks every running tool service to announce itself now (sent by a reader that starts)."""

    requester: str = ""
