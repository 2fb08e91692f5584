"""A ``decision`` template's policy applied to one step of the agent: the schema it may answer
with, or the answer itself when no LLM call is needed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from trustgraph.base.formats import decision_schema

from .spec import Decision


@dataclass
class _Step:
    schema: dict[str, Any] | None = None
    direct: str | None = None


def _decide(policy: Decision, schema: dict[str, Any], history: Any) -> _Step:
    """What a ``decision`` template asks of this step: the (narrowed) schema, or the answer itself."""
    steps = history if isinstance(history, list) else []
    last = steps[-1] if steps and isinstance(steps[-1], dict) else None
    observation = last.get("observation") if last is not None else None
    succeeded = isinstance(observation, str) and bool(observation.strip()) \
        and not observation.startswith("Error:")
    # An agent that asks for a call alone (a schema without the answer: the next request of a
    # question that makes several) gets the model's call, whatever comes after a result.
    answerable = decision_schema.FINAL_ACTION in decision_schema.action_names(schema)
    if succeeded and policy.after_result == "observation" and answerable:
        return _Step(direct=decision_schema.final(observation.strip()))
    if succeeded and policy.after_result == "answer":
        return _Step(schema=decision_schema.narrow(schema, calls=False))
    if not steps and policy.first_step == "tool":
        return _Step(schema=decision_schema.narrow(schema, answer=False))
    return _Step(schema=schema)
