"""tg-invoke-llm and tg-invoke-prompt against a launched stack with the embedded model."""

from __future__ import annotations

import json

import pytest
from support import NO_TOOL_SERVICES, bounded_llm, wait_for
from trustgraph.model.text_completion.llamacpp.llm import default_model_path

# The real embedded SmolLM2 model, given as a user gives their own GGUF file: under a name of
# its own (a link to the default model's file), so what the status line and the service's log
# name is the file given, not the default. The agent's e2e tests run the default without --model.
OWN_MODEL = "my-own-model.gguf"

# The real model on a loaded machine: a hang bound, not a speed.
pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def stack(stack_factory, tmp_path_factory):
    model = tmp_path_factory.mktemp("model") / OWN_MODEL
    model.symlink_to(default_model_path())
    # Short answers (48 tokens at most): what is tested is that the model answers, not how much.
    stack = stack_factory("--no-agent", *NO_TOOL_SERVICES, "--model", str(model),
                          *bounded_llm(model.parent, 48))
    stack.model = model
    return stack


def test_the_model_given_is_the_one_that_runs_and_the_status_line_names_it(stack):
    assert f"llm            embedded {OWN_MODEL}\n" in stack.output()
    # The service's own line once llama.cpp has loaded it (before the status line is printed).
    assert f"Model {stack.model} loaded" in (stack.data_dir / "logs" / "llm.log").read_text()


def test_invoke_llm_answers_from_the_embedded_model(stack):
    r = stack.cli("tg-invoke-llm", "Say hello in one short sentence.", timeout=120)
    assert r.returncode == 0, r.stderr
    assert len(r.stdout.strip()) > 0   # the wording is the model's; that it answers is ours


def test_invoke_llm_rest_reports_token_counts(stack):
    import urllib.request
    body = json.dumps({"system": "", "prompt": "Say hi.", "streaming": False}).encode()
    req = urllib.request.Request(stack.url + "api/v1/flow/default/service/text-completion", data=body,
                                 headers={"Content-Type": "application/json"})
    reply = json.loads(urllib.request.urlopen(req, timeout=120).read())
    assert reply["response"] and reply["in_token"] > 0 and reply["out_token"] > 0
    assert reply["end_of_stream"] is True


def test_invoke_prompt_with_a_template_set_by_the_cli(stack):
    r = stack.cli("tg-set-prompt", "--id", "echo-name", "--prompt", "Repeat this name exactly: {{name}}")
    assert r.returncode == 0, r.stderr
    r = stack.cli("tg-show-prompts")
    assert "echo-name" in r.stdout and "agent-react" in r.stdout
    # prompt-template reloads on the config push.
    r = wait_for("tg-invoke-prompt with the new template",
                 lambda: (r := stack.cli("tg-invoke-prompt", "echo-name", "name=Ada")).returncode == 0 and r, 120)
    assert r.stdout.strip()
    # A missing variable renders empty, as upstream's ibis renders it; a template
    # opts into an error naming it with "strict": true (tests/unit/test_prompt_templates.py).
    r = stack.cli("tg-invoke-prompt", "echo-name")
    assert r.returncode == 0, r.stderr
