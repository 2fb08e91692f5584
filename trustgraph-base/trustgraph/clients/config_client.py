"""``ConfigClient``: the config service over Pulsar (what ``tg-init-trustgraph`` uses)."""

from __future__ import annotations

from typing import Any

from ..schema import (
    ConfigKey,
    ConfigRequest,
    ConfigResponse,
    ConfigValue,
    config_request_queue,
    config_response_queue,
)
from .base import DEBUG, ERROR, INFO, WARN, BaseClient  # noqa: F401 - upstream's names
from .services import Definition, Relationship, Topic  # noqa: F401 - upstream's module has them

Item = dict[str, Any]


class ConfigClient(BaseClient):
    """get / list / getvalues / put / delete / config, with dicts of type, key and value."""

    def __init__(self, log_level: Any = ERROR, subscriber: str | None = None, input_queue: str | None = None,
                 output_queue: str | None = None, pulsar_host: str = "pulsar://pulsar:6650",
                 listener: str | None = None, pulsar_api_key: str | None = None) -> None:
        super().__init__(log_level=log_level, subscriber=subscriber,
                         input_queue=input_queue or config_request_queue,
                         output_queue=output_queue or config_response_queue,
                         input_schema=ConfigRequest, output_schema=ConfigResponse,
                         pulsar_host=pulsar_host, pulsar_api_key=pulsar_api_key, listener=listener)

    @staticmethod
    def _items(resp: ConfigResponse) -> list[Item]:
        return [{"type": v.type, "key": v.key, "value": v.value} for v in resp.values or []]

    def get(self, keys: list[Item], timeout: float = 300) -> list[Item]:
        """The values of ``[{"type", "key"}]``."""
        return self._items(self.call(operation="get", timeout=timeout,
                                     keys=[ConfigKey(type=k["type"], key=k["key"]) for k in keys]))

    def list(self, type: str, timeout: float = 300) -> list[str]:  # noqa: A002
        """The keys of one type."""
        return self.call(operation="list", type=type, timeout=timeout).directory

    def getvalues(self, type: str, timeout: float = 300) -> list[Item]:  # noqa: A002
        """Every item of one type."""
        return self._items(self.call(operation="getvalues", type=type, timeout=timeout))

    def delete(self, keys: list[Item], timeout: float = 300) -> None:
        """Delete ``[{"type", "key"}]``."""
        self.call(operation="delete", timeout=timeout,
                  keys=[ConfigKey(type=k["type"], key=k["key"]) for k in keys])

    def put(self, values: list[Item], timeout: float = 300) -> None:
        """Write ``[{"type", "key", "value"}]``."""
        self.call(operation="put", timeout=timeout,
                  values=[ConfigValue(type=v["type"], key=v["key"], value=v["value"]) for v in values])

    def config(self, timeout: float = 300) -> tuple[dict[str, dict[str, str]], int]:
        """The whole config and its version."""
        resp = self.call(operation="config", timeout=timeout)
        return resp.config, resp.version
