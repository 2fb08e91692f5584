"""Where our announcements, probes and serving notices go under ``--wire 2.11``.

Ours go in ``tg/config`` (:mod:`trustgraph.topics`), a namespace every 2.1
deployment has.  Upstream 2.11's topology creates only the flow, request,
response and notify namespaces, and on an Apache Pulsar cluster a topic of a
namespace that does not exist cannot be opened; notify is 2.11's own namespace
for broadcasts (its config notices), non-persistent like ours.  No upstream
2.11 peer subscribes to these either: they are ours, placed where a 2.11
deployment lets them be.
"""

from __future__ import annotations

from trustgraph.topics import AnnounceTopics

ANNOUNCE_211 = "non-persistent://tg/notify/tool-service-announce"
PROBE_211 = "non-persistent://tg/notify/tool-service-probe"
SERVING_211 = "non-persistent://tg/notify/serving-started"

#: The three, as :meth:`trustgraph.compat.v211.wire.Wire211.announce_topics` gives them.
ANNOUNCE_TOPICS_211 = AnnounceTopics(ANNOUNCE_211, PROBE_211, SERVING_211)
