"""Which translators serve which service name: upstream 2.1.4's ``TranslatorRegistry``.

Upstream's gateway dispatchers look their translators up here by service
name (``"agent"``, ``"tool"``, ``"triples-query"``, ...); the table is filled
once, when :mod:`trustgraph.messaging` is imported.  It is shared by the
process, as upstream's class attributes are.
"""

from __future__ import annotations

from typing import ClassVar

from .translators.base import Translator


class TranslatorRegistry:
    """Service name -> request translator and response translator (class-level, as upstream)."""

    _request_translators: ClassVar[dict[str, Translator]] = {}
    _response_translators: ClassVar[dict[str, Translator]] = {}

    @classmethod
    def register_request(cls, service_name: str, translator: Translator) -> None:
        cls._request_translators[service_name] = translator

    @classmethod
    def register_response(cls, service_name: str, translator: Translator) -> None:
        cls._response_translators[service_name] = translator

    @classmethod
    def register_service(cls, service_name: str, request_translator: Translator,
                         response_translator: Translator) -> None:
        """Both directions of one request/response service."""
        cls.register_request(service_name, request_translator)
        cls.register_response(service_name, response_translator)

    @classmethod
    def get_request_translator(cls, service_name: str) -> Translator:
        """The request translator of ``service_name``; a ``KeyError`` naming it when there is none."""
        try:
            return cls._request_translators[service_name]
        except KeyError:
            raise KeyError(f"No request translator registered for service: {service_name}") from None

    @classmethod
    def get_response_translator(cls, service_name: str) -> Translator:
        """The response translator of ``service_name``; a ``KeyError`` naming it when there is none."""
        try:
            return cls._response_translators[service_name]
        except KeyError:
            raise KeyError(f"No response translator registered for service: {service_name}") from None

    @classmethod
    def list_services(cls) -> list[str]:
        """Every service name with a translator in either direction, sorted."""
        return sorted(cls._request_translators.keys() | cls._response_translators.keys())

    @classmethod
    def has_service(cls, service_name: str) -> bool:
        return service_name in cls._request_translators or service_name in cls._response_translators
