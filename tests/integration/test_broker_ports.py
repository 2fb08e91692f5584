"""The embedded broker's ports: one chosen for it that another process takes before the broker
binds it is chosen again; one it was given is not, and says so.

CI lost two tests to that race once (``Address already in use`` in the broker's log: the port
:func:`free_port` chose was given to some other connection before pulsar-lite bound it).  Here
the port is taken on purpose, by a bound socket, between choosing and starting.
"""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from trustgraph.base.launching.broker import BrokerError, EmbeddedBroker, PortTaken


def _occupy(port: int) -> socket.socket:
    """A socket bound to ``port`` that does not listen, as an outgoing connection's is: the
    broker cannot bind the port, and nothing answers on it."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", port))
    return s


def _serves(url: str) -> bool:
    host, port = url.removeprefix("pulsar://").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10):
        return True


@pytest.mark.parametrize("which", ["port", "metrics_port"])
def test_a_chosen_port_taken_before_the_broker_binds_it_is_chosen_again(tmp_path: Path, which: str):
    broker = EmbeddedBroker(tmp_path / "broker")
    taken = getattr(broker, which)
    with _occupy(taken):
        broker.start()
        try:
            assert getattr(broker, which) != taken
            assert _serves(broker.url)
            assert b"in use" in broker.log_path.read_bytes() or b"AddrInUse" in broker.log_path.read_bytes()
            # From now on its clients know its URL: a restart keeps the port, whatever happens.
            assert broker.choose_ports_again() is False
            port = broker.port
            broker.restart()
            assert broker.port == port and _serves(broker.url)
        finally:
            broker.stop()


def test_a_port_it_was_given_is_not_changed_and_the_error_says_why(tmp_path: Path):
    probe = _occupy(0)
    port = probe.getsockname()[1]
    with probe:
        broker = EmbeddedBroker(tmp_path / "broker", port=port, metrics_port=port)
        with pytest.raises(PortTaken) as failed:
            broker.start()
        assert broker.port == port and isinstance(failed.value, BrokerError)
        assert "embedded broker failed to start" in str(failed.value) and str(broker.log_path) in str(failed.value)
        assert broker.proc is None   # nothing left running
