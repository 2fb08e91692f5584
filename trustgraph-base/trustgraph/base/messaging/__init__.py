"""Messages on the broker: publishing and consuming, request/response calls and the serving side.

* :mod:`.pubsub` (``PubSub``, ``Producer``, ``Consumer``), :mod:`.producer`,
  :mod:`.consumer`, :mod:`.message`, :mod:`.errors`: the asyncio core every
  processor uses, above the transport seam (:mod:`.transport`);
* :mod:`.pulsar_transport`: Apache Pulsar and pulsar-lite behind the seam (the only
  modules that import a broker client are the transports and :mod:`.pulsar_backend`,
  upstream's synchronous backend); :mod:`.rabbitmq_topology`: how our topics
  become RabbitMQ exchanges and queues;
* :mod:`.broker_url`, :mod:`.broker_retry`, :mod:`.connection_watch`: which
  broker, waiting for it, and whether it is still there;
* :mod:`.request_response` (the calling side), :mod:`.serving` (the answering
  side), :mod:`.deadlines` (how long a caller waits), :mod:`.lost_calls` (calls
  a broker outage swallowed), :mod:`.rate_limits` (asking a rate-limited backend
  again);
* :mod:`.broker_consumers`, :mod:`.unserved`: which topics nobody consumes;
* :mod:`.metrics`: the Prometheus counters of consumers and services.

Nothing here knows about processors or tools; the rooms above it use it.
"""
