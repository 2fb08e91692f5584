"""``LogLevel``: the log-level choice of upstream's commands, and its pulsar-client equivalent."""

from __future__ import annotations

from enum import Enum
from typing import Any


class LogLevel(Enum):
    """A command-line log level; ``str()`` gives the flag value, :meth:`to_pulsar` the client's."""

    DEBUG = "debug"
    INFO = "info"
    WARN = "warn"
    ERROR = "error"

    def __str__(self) -> str:
        return self.value

    def to_pulsar(self) -> Any:
        """The pulsar-client logger level of the same severity (``pulsar.LoggerLevel``; the sync
        Pulsar backend is imported only when asked, as nothing else here needs a broker client)."""
        from .base.messaging.pulsar_backend import LoggerLevel
        return {
            LogLevel.DEBUG: LoggerLevel.Debug,
            LogLevel.INFO: LoggerLevel.Info,
            LogLevel.WARN: LoggerLevel.Warn,
            LogLevel.ERROR: LoggerLevel.Error,
        }[self]
