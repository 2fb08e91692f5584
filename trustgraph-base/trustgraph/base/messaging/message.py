"""A decoded message as handlers see it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass(slots=True)
class Message(Generic[T]):
    """A decoded message as handlers see it."""

    value: T
    properties: dict[str, str]
    topic: str

    @property
    def id(self) -> str | None:
        """The correlation id property, if the sender set one."""
        return self.properties.get("id")
