"""``LogLevel``: the log-level choice of upstream's commands, and its pulsar-client equivalent."""

from __future__ import annotations

from enum import Enum

import _pulsar


class LogLevel(Enum):
    """A command-line log level; ``str()`` gives the flag value, :meth:`to_pulsar` the client's."""

    DEBUG = "debug"
    INFO = "info"
    WARN = "warn"
    ERROR = "error"

    def __str__(self) -> str:
        return self.value

    def to_pulsar(self) -> _pulsar.LoggerLevel:
        """The pulsar-client logger level of the same severity."""
        return {
            LogLevel.DEBUG: _pulsar.LoggerLevel.Debug,
            LogLevel.INFO: _pulsar.LoggerLevel.Info,
            LogLevel.WARN: _pulsar.LoggerLevel.Warn,
            LogLevel.ERROR: _pulsar.LoggerLevel.Error,
        }[self]
