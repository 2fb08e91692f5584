"""``Config``: the config service over REST (``POST api/v1/config``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .exceptions import ProtocolException
from .types import ConfigKey, ConfigValue

if TYPE_CHECKING:
    from .api import Api


def _values(reply: dict[str, Any]) -> list[ConfigValue]:
    try:
        return [ConfigValue(type=v["type"], key=v["key"], value=v["value"]) for v in reply["values"]]
    except (KeyError, TypeError):
        raise ProtocolException("Response not formatted correctly") from None


class Config:
    """get / put / delete / list / getvalues / config of the config service."""

    def __init__(self, api: Api) -> None:
        self.api = api

    def request(self, request: dict[str, Any]) -> dict[str, Any]:
        """One raw config operation."""
        return self.api.request("config", request)

    def get(self, keys: list[ConfigKey]) -> list[ConfigValue]:
        """The values of some keys (a missing key comes back with value None)."""
        return _values(self.request({"operation": "get",
                                     "keys": [{"type": k.type, "key": k.key} for k in keys]}))

    def put(self, values: list[ConfigValue]) -> None:
        """Write some items (one version step)."""
        self.request({"operation": "put",
                      "values": [{"type": v.type, "key": v.key, "value": v.value} for v in values]})

    def delete(self, keys: list[ConfigKey]) -> None:
        """Delete some items."""
        self.request({"operation": "delete", "keys": [{"type": k.type, "key": k.key} for k in keys]})

    def list(self, type: str) -> list[str]:  # noqa: A002 - upstream's parameter name
        """The keys of one type."""
        return self.request({"operation": "list", "type": type}).get("directory") or []

    def get_values(self, type: str) -> list[ConfigValue]:  # noqa: A002
        """Every item of one type."""
        return _values(self.request({"operation": "getvalues", "type": type}))

    def all(self) -> tuple[dict[str, dict[str, str]], int]:
        """The whole config and its version."""
        reply = self.request({"operation": "config"})
        try:
            return reply["config"], reply["version"]
        except KeyError:
            raise ProtocolException("Response not formatted correctly") from None
