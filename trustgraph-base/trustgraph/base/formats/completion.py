"""Our extensions of a text-completion request and response, carried as message properties.

The records stay upstream's (``TextCompletionRequest{system, prompt, streaming}``); what an
upstream LLM service does not know it ignores, so every extension must leave a request that
still works without it:

* :data:`STOP`: the stop strings (JSON array text).
* :data:`PREFIX`: the start of the assistant's turn, which the model continues (a template's
  replayed turns and its prefix, e.g. ``... Observation: ...\\nThought:``).  The request's
  ``prompt`` then already holds that text at its end, so an LLM service that cannot continue a
  turn (every upstream ``text-completion-*``, and ours for an OpenAI-compatible server) still
  shows the model the whole dialog.
* :data:`PREFIX_PROMPT`: the prompt without that text, for a service that does continue the
  turn (it sends this as the user's message and :data:`PREFIX` as the assistant's).
* :data:`PREFIX_CONTINUED` (response): set on every message of a completion that continued the
  prefix; only then does the prompt service put the prefix back in front of the answer.  Any
  other reply is a whole turn of its own, and gets nothing put in front of it.
"""

from __future__ import annotations

STOP = "stop"
PREFIX = "prefix"
PREFIX_PROMPT = "prefix-prompt"
PREFIX_CONTINUED = "prefix-continued"


def with_turn(prompt: str, turn: str) -> str:
    """``prompt`` with the start of the assistant's ``turn`` written at its end, for a model
    that is shown the whole dialog as one message."""
    if not turn:
        return prompt
    return prompt + turn if not prompt or prompt.endswith("\n") else f"{prompt}\n{turn}"
