"""``Flow`` (blueprints and flows, ``POST api/v1/flow``) and ``FlowInstance`` (one flow's services).

A flow service is ``POST api/v1/flow/{id}/service/{kind}``; the gateway
returns only its final message, so these calls do not stream (see
:mod:`.socket_client` for that).
"""

from __future__ import annotations

import base64
import json
from typing import TYPE_CHECKING, Any

from ..knowledge import Literal, Uri, hash
from .exceptions import ProtocolException
from .terms import from_value, metadata_triples, to_value, triple_from_json  # noqa: F401 - re-exported
from .types import Triple

if TYPE_CHECKING:
    from .api import Api


class Flow:
    """Blueprints (``*_blueprint``) and flows (``list``, ``get``, ``start``, ``stop``)."""

    def __init__(self, api: Api) -> None:
        self.api = api

    def request(self, path: str | None = None, request: dict[str, Any] | None = None) -> dict[str, Any]:
        """``POST api/v1/flow`` (or ``api/v1/flow/{path}``)."""
        if request is None:
            raise RuntimeError("request must be specified")
        return self.api.request(f"flow/{path}" if path else "flow", request)

    def id(self, id: str = "default") -> FlowInstance:  # noqa: A002
        """The services of flow ``id``."""
        return FlowInstance(api=self, id=id)

    def list_blueprints(self) -> list[str]:
        """The blueprint names."""
        return self.request(request={"operation": "list-blueprints"})["blueprint-names"]

    def get_blueprint(self, blueprint_name: str) -> Any:
        """One blueprint's definition, decoded."""
        reply = self.request(request={"operation": "get-blueprint", "blueprint-name": blueprint_name})
        return json.loads(reply["blueprint-definition"])

    def put_blueprint(self, blueprint_name: str, definition: Any) -> None:
        """Store a blueprint (given as an object)."""
        self.request(request={"operation": "put-blueprint", "blueprint-name": blueprint_name,
                              "blueprint-definition": json.dumps(definition)})

    def delete_blueprint(self, blueprint_name: str) -> None:
        """Delete a blueprint."""
        self.request(request={"operation": "delete-blueprint", "blueprint-name": blueprint_name})

    def list(self) -> list[str]:
        """The running flows' ids."""
        return self.request(request={"operation": "list-flows"})["flow-ids"]

    def get(self, id: str) -> Any:  # noqa: A002
        """One flow's record (description, blueprint-name, interfaces, parameters)."""
        return json.loads(self.request(request={"operation": "get-flow", "flow-id": id})["flow"])

    def start(self, blueprint_name: str, id: str, description: str,  # noqa: A002
              parameters: dict[str, Any] | None = None) -> None:
        """Start a flow from a blueprint; parameter values may be any JSON value."""
        request: dict[str, Any] = {"operation": "start-flow", "flow-id": id,
                                   "blueprint-name": blueprint_name, "description": description}
        if parameters:
            request["parameters"] = parameters
        self.request(request=request)

    def stop(self, id: str) -> None:  # noqa: A002
        """Stop a flow."""
        self.request(request={"operation": "stop-flow", "flow-id": id})


def _raise_service_error(reply: dict[str, Any]) -> None:
    error = reply.get("error")
    if error:
        raise ProtocolException(f"{error.get('type', 'unknown')}: {error.get('message', 'Unknown error')}")


class FlowInstance:
    """The services of one flow, over REST."""

    def __init__(self, api: Flow, id: str) -> None:  # noqa: A002
        self.api = api
        self.id = id

    def request(self, path: str, request: dict[str, Any]) -> dict[str, Any]:
        """``POST api/v1/flow/{id}/{path}``."""
        return self.api.request(path=f"{self.id}/{path}", request=request)

    def _service(self, kind: str, request: dict[str, Any]) -> dict[str, Any]:
        return self.request(f"service/{kind}", request)

    def text_completion(self, system: str, prompt: str) -> str:
        """The LLM's answer."""
        return self._service("text-completion", {"system": system, "prompt": prompt})["response"]

    def agent(self, question: str, user: str = "trustgraph", state: str | None = None,
              group: list[str] | None = None, history: list[dict[str, Any]] | None = None) -> str:
        """The agent's final answer."""
        request: dict[str, Any] = {"question": question, "user": user}
        if state is not None:
            request["state"] = state
        if group is not None:
            request["group"] = group
        request["history"] = history or []
        return self._service("agent", request)["answer"]

    def graph_rag(self, query: str, user: str = "trustgraph", collection: str = "default",
                  entity_limit: int = 50, triple_limit: int = 30, max_subgraph_size: int = 150,
                  max_path_length: int = 2) -> str:
        """A graph-RAG answer."""
        return self._service("graph-rag", {
            "query": query, "user": user, "collection": collection, "entity-limit": entity_limit,
            "triple-limit": triple_limit, "max-subgraph-size": max_subgraph_size,
            "max-path-length": max_path_length})["response"]

    def document_rag(self, query: str, user: str = "trustgraph", collection: str = "default",
                     doc_limit: int = 10) -> str:
        """A document-RAG answer."""
        return self._service("document-rag", {"query": query, "user": user, "collection": collection,
                                              "doc-limit": doc_limit})["response"]

    def embeddings(self, text: str) -> list[list[float]]:
        """The embedding vectors of a text."""
        return self._service("embeddings", {"text": text})["vectors"]

    def graph_embeddings_query(self, text: str, user: str, collection: str, limit: int = 10) -> dict[str, Any]:
        """Entities near a text: embeds it, then queries the graph embeddings."""
        return self._service("graph-embeddings", {"vectors": self.embeddings(text), "user": user,
                                                  "collection": collection, "limit": limit})

    def document_embeddings_query(self, text: str, user: str, collection: str,
                                  limit: int = 10) -> dict[str, Any]:
        """Chunks near a text: embeds it, then queries the document embeddings."""
        return self._service("document-embeddings", {"vectors": self.embeddings(text), "user": user,
                                                     "collection": collection, "limit": limit})

    def prompt(self, id: str, variables: dict[str, Any]) -> Any:  # noqa: A002
        """A prompt template's result: the text, or the decoded object of a JSON template."""
        reply = self._service("prompt", {"id": id, "variables": variables})
        if "text" in reply:
            return reply["text"]
        if "object" in reply:
            try:
                return json.loads(reply["object"])
            except (TypeError, ValueError):
                raise ProtocolException("Returned object not well-formed JSON") from None
        raise ProtocolException("Response not formatted correctly")

    def mcp_tool(self, name: str, parameters: dict[str, Any] | None = None) -> Any:
        """Call an MCP tool: its text, or its structured result."""
        reply = self._service("mcp-tool", {"name": name, "parameters": parameters or {}})
        if "text" in reply:
            return reply["text"]
        if "object" in reply:
            return reply["object"]
        raise ProtocolException("Response not formatted correctly")

    def triples_query(self, s: Any = None, p: Any = None, o: Any = None, user: str | None = None,
                      collection: str | None = None, limit: int = 10000) -> list[Triple]:
        """Triples matching a pattern; ``s`` and ``p`` must be Uri, ``o`` a Uri or Literal."""
        request: dict[str, Any] = {"limit": limit}
        if user:
            request["user"] = user
        if collection:
            request["collection"] = collection
        for name, value, kinds in (("s", s, (Uri,)), ("p", p, (Uri,)), ("o", o, (Uri, Literal))):
            if value:
                if not isinstance(value, kinds):
                    raise RuntimeError(f"{name} must be {' or '.join(k.__name__ for k in kinds)}")
                request[name] = from_value(value)
        reply = self._service("triples", request)
        return [triple_from_json(t) for t in reply.get("response") or []]

    def _load(self, kind: str, content_key: str, content: bytes, id: str | None, metadata: Any,  # noqa: A002
              user: str | None, collection: str | None, extra: dict[str, Any]) -> dict[str, Any]:
        if id is None:
            if metadata is not None:
                raise RuntimeError("Can't specify metadata without id")
            id = hash(content)  # noqa: A001
        request: dict[str, Any] = {"id": id, "metadata": metadata_triples(metadata), **extra,
                                   content_key: base64.b64encode(content).decode("utf-8")}
        if user:
            request["user"] = user
        if collection:
            request["collection"] = collection
        return self._service(kind, request)

    def load_document(self, document: bytes, id: str | None = None, metadata: Any = None,  # noqa: A002
                      user: str | None = None, collection: str | None = None) -> dict[str, Any]:
        """Send a binary document into the flow (``document-load``)."""
        return self._load("document-load", "data", document, id, metadata, user, collection, {})

    def load_text(self, text: bytes, id: str | None = None, metadata: Any = None,  # noqa: A002
                  charset: str = "utf-8", user: str | None = None,
                  collection: str | None = None) -> dict[str, Any]:
        """Send a text document (bytes in ``charset``) into the flow (``text-load``)."""
        return self._load("text-load", "text", text, id, metadata, user, collection, {"charset": charset})

    def rows_query(self, query: str, user: str = "trustgraph", collection: str = "default",
                   variables: dict[str, Any] | None = None,
                   operation_name: str | None = None) -> dict[str, Any]:
        """A GraphQL query over stored rows: ``{"data", "errors"?, "extensions"?}``."""
        request: dict[str, Any] = {"query": query, "user": user, "collection": collection}
        if variables:
            request["variables"] = variables
        if operation_name:
            request["operation_name"] = operation_name
        reply = self._service("rows", request)
        _raise_service_error(reply)
        return {k: reply[k] for k in ("data", "errors", "extensions")
                if k in reply and (k == "data" or reply[k])}

    def nlp_query(self, question: str, max_results: int = 100) -> dict[str, Any]:
        """A question turned into GraphQL."""
        reply = self._service("nlp-query", {"question": question, "max_results": max_results})
        _raise_service_error(reply)
        return reply

    def structured_query(self, question: str, user: str = "trustgraph",
                         collection: str = "default") -> dict[str, Any]:
        """A question answered from structured data."""
        reply = self._service("structured-query", {"question": question, "user": user,
                                                   "collection": collection})
        _raise_service_error(reply)
        return reply

    def _diag(self, request: dict[str, Any]) -> dict[str, Any]:
        reply = self._service("structured-diag", request)
        _raise_service_error(reply)
        return reply

    def detect_type(self, sample: str) -> str:
        """The format of a data sample (csv, json, xml)."""
        return self._diag({"operation": "detect-type", "sample": sample})["detected-type"]

    def generate_descriptor(self, sample: str, data_type: str, schema_name: str,
                            options: dict[str, Any] | None = None) -> Any:
        """An import descriptor for a sample into a schema."""
        request: dict[str, Any] = {"operation": "generate-descriptor", "sample": sample,
                                   "type": data_type, "schema-name": schema_name}
        if options:
            request["options"] = options
        return self._diag(request)["descriptor"]

    def diagnose_data(self, sample: str, schema_name: str | None = None,
                      options: dict[str, Any] | None = None) -> dict[str, Any]:
        """Type detection and a descriptor in one call."""
        request: dict[str, Any] = {"operation": "diagnose", "sample": sample}
        if schema_name:
            request["schema-name"] = schema_name
        if options:
            request["options"] = options
        return self._diag(request)

    def schema_selection(self, sample: str, options: dict[str, Any] | None = None) -> list[str]:
        """The schemas a sample could belong to."""
        request: dict[str, Any] = {"operation": "schema-selection", "sample": sample}
        if options:
            request["options"] = options
        return self._diag(request)["schema-matches"]

    def row_embeddings_query(self, text: str, schema_name: str, user: str = "trustgraph",
                             collection: str = "default", index_name: str | None = None,
                             limit: int = 10) -> dict[str, Any]:
        """Rows whose indexed values are near a text: embeds it, then queries row embeddings."""
        request: dict[str, Any] = {"vectors": self.embeddings(text), "schema_name": schema_name,
                                   "user": user, "collection": collection, "limit": limit}
        if index_name:
            request["index_name"] = index_name
        reply = self._service("row-embeddings", request)
        _raise_service_error(reply)
        return reply
