"""Generic (backend-neutral) topic names."""


def topic(name: str, qos: str = "q1", tenant: str = "tg", namespace: str = "flow") -> str:
    """Build the generic topic form ``qos/tenant/namespace/name``.

    The messaging backend maps the ``q0``/``q1``/``q2`` prefix to a real
    topic (``non-persistent://`` or ``persistent://`` on Pulsar) and is the
    place that rejects an unknown qos, so this function only formats.
    """
    return f"{qos}/{tenant}/{namespace}/{name}"
