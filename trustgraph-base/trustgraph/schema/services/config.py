"""Config-service records, and (re-exported) its fixed global topics."""

from dataclasses import dataclass, field

from ...topics import config_push_queue, config_request_queue, config_response_queue
from ..core.primitives import Error


@dataclass
class ConfigKey:
    """Address of one config item: ``type`` (class) and ``key``."""

    type: str = ""
    key: str = ""


@dataclass
class ConfigValue:
    """A config item; ``value`` is null in a ``get`` reply when the key is absent."""

    type: str = ""
    key: str = ""
    value: str | None = ""


@dataclass
class ConfigRequest:
    """Config operation: get, list, getvalues, put, delete or config."""

    operation: str = ""
    keys: list[ConfigKey] = field(default_factory=list)
    type: str = ""
    values: list[ConfigValue] = field(default_factory=list)


@dataclass
class ConfigResponse:
    """Reply to a ConfigRequest; only the fields the operation uses are filled."""

    version: int = 0
    values: list[ConfigValue] = field(default_factory=list)
    directory: list[str] = field(default_factory=list)
    config: dict[str, dict[str, str]] = field(default_factory=dict)
    error: Error | None = None


@dataclass
class ConfigPush:
    """The entire config store at ``version``; pushes are never deltas."""

    version: int = 0
    config: dict[str, dict[str, str]] = field(default_factory=dict)


# The global queues are defined with the topic grammar (trustgraph.topics)
# and re-exported here, where upstream code imports them from.
__all__ = ["ConfigKey", "ConfigPush", "ConfigRequest", "ConfigResponse", "ConfigValue",
           "config_push_queue", "config_request_queue", "config_response_queue"]
