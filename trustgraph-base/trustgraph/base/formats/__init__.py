"""What the agent, the prompt service, the LLM services and the tools hand each other as text.

* :mod:`.completion`: our properties of a text-completion request and response (stop
  strings, the assistant turn a model continues);
* :mod:`.decision_schema`: the JSON Schema of an agent's next step, and how it
  travels and is narrowed;
* :mod:`.text`: a value as observation text, a response's text or JSON, code
  fences.
"""
