"""The scripted stand-in reports a rule's choice scores, as a model server reading token
probabilities would, so a test or the bench can say what a right model would rather have done."""

from __future__ import annotations

import pytest
from trustgraph.model.text_completion.scripted.llm import Processor, Script, ScriptError


def test_a_rules_scores_come_with_its_reply_and_only_for_the_options_asked():
    script = Script({"rules": [{"match": "capital", "reply": '{"action": "weather", "args": {}}',
                                "scores": {"final-answer": 0.99, "unknown": 0.5}},
                               {"match": ".", "reply": "plain"}]})
    assert script.answer("the capital of France") == ('{"action": "weather", "args": {}}',
                                                      {"final-answer": 0.99, "unknown": 0.5})
    assert script.answer("anything") == ("plain", None)
    proc = Processor.__new__(Processor)   # only _answer is exercised: no broker needed
    proc.script = script
    got = proc._answer("", "the capital of France", [], "", None, ("action", ["weather", "final-answer"]))
    assert got.choice_scores == {"weather": 0.0, "final-answer": 0.99}
    assert proc._answer("", "the capital of France", [], "", None).choice_scores is None   # not asked


@pytest.mark.parametrize("scores", [[0.5], {"a": "high"}, {"a": True}])
def test_bad_scores_are_refused_at_load_naming_the_rule(scores):
    with pytest.raises(ScriptError, match="rule 0: 'scores' must be an object"):
        Script({"rules": [{"match": "x", "reply": "y", "scores": scores}]})
