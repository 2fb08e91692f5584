"""Ours: a processor tells callers it now serves a request topic (no upstream peer sends or reads it)."""

from dataclasses import dataclass, field


@dataclass
class ServingStarted:
    """Sent when a processor of ours starts consuming ``topic``.

    A request topic is non-persistent: what a process that died had taken is
    gone with it.  A caller that hears a service start again fails its calls
    still waiting on that topic at once, instead of at their deadlines, so the
    slots they hold are free again (``trustgraph.base.messaging.request_response``).

    ``sent``: served since then (wall-clock): a call sent before went to no
    subscription of this process, unless its id is in ``received`` (the
    requests that reached it after a resubscription, before the notice was
    written), which are being served.  Older processes of ours ignore
    ``received``.  A first start says so (``first``): its callers fail
    nothing, and count the topic as served.  A process back from a lost
    broker connection says so too (``reconnected``): what it did not get
    was lost with the connection, not with a process.
    """

    topic: str = ""
    processor: str = ""
    instance: str = ""
    sent: float = 0.0
    received: list[str] | None = field(default_factory=list)
    #: The process started for the first time (not in place of one that died): nothing its
    #: callers sent was lost; they only learn that the topic is served from ``sent`` on,
    #: before the broker's consumer gauge shows it.  Older processes of ours never send it.
    first: bool = False
    #: The same process consumes ``topic`` again after its broker connection was lost (it did
    #: not restart): its callers say the connection lost the call, not a restart.  Older
    #: processes of ours never send it.
    reconnected: bool = False
