"""``trustgraph.base.prompt_client``: upstream 2.1.4's prompt client and spec (:mod:`trustgraph.compat.v214.client_specs`)."""

from trustgraph.compat.v214.client_specs import PromptClient, PromptClientSpec

__all__ = ["PromptClient", "PromptClientSpec"]
