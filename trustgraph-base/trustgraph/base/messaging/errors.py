"""What a failed broker operation raises.

The producer (:mod:`.producer`) and the client that opens producers and
consumers (:mod:`.pubsub`) raise the same errors, and callers catch them
without caring which of the two failed, so the errors live below both.
"""

from __future__ import annotations


class PubSubError(RuntimeError):
    """A broker operation failed (send rejected, connection lost for too long)."""


class MessageTooLarge(PubSubError):
    """A message bigger than the broker takes on a topic that cannot chunk it."""
