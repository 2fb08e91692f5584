"""``trustgraph.template``: upstream 2.1.4's package path (its prompt manager); the code is in
``trustgraph.flow_compat.v214``, on our prompt service's templates (``trustgraph.prompt.template``)."""

from .prompt_manager import Prompt, PromptConfiguration, PromptManager

__all__ = ["Prompt", "PromptConfiguration", "PromptManager"]
