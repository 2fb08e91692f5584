"""``trustgraph.template.prompt_manager``: upstream 2.1.4's module path (the code: ``trustgraph.flow_compat.v214``)."""

from trustgraph.flow_compat.v214.prompt_manager import Prompt, PromptConfiguration, PromptManager

__all__ = ["Prompt", "PromptConfiguration", "PromptManager"]
