"""``trustgraph.base.text_completion_client``: upstream 2.1.4's LLM client and spec (:mod:`trustgraph.compat.v214.client_specs`)."""

from trustgraph.compat.v214.client_specs import TextCompletionClient, TextCompletionClientSpec

__all__ = ["TextCompletionClient", "TextCompletionClientSpec"]
