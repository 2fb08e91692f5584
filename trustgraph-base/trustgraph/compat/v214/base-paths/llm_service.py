"""``trustgraph.base.llm_service``: upstream 2.1.4's LLM service base, from :mod:`trustgraph.compat.v214.llm`."""

from trustgraph.compat.v214.llm import LlmChunk, LlmResult, LlmService, default_concurrency, default_ident

__all__ = ["LlmChunk", "LlmResult", "LlmService", "default_concurrency", "default_ident"]
