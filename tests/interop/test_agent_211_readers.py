"""Our agent under ``--wire 2.11``, read by upstream 2.11.1's own code.

Our agent runs a dialog (a tool call, then the answer; streamed and whole) on the in-memory
transport with 2.11's records; every message it sent is then handed, as the bytes it put on the
bus, to ``agent_reader_211.py`` in ``.interop/upstream-2.11``: 2.11.1's Pulsar decoder, its
api-gateway's agent translator and its Python API's socket client (what ``tg-invoke-agent``
reads) say what they make of it.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from trustgraph.agent.react import Processor as Agent
from trustgraph.base import DynamicToolService
from trustgraph.base.testing import MemoryBroker, ScriptedPrompt, action, final_answer, worker
from trustgraph.compat.v211 import schema as v211
from trustgraph.schema import PromptRequest, encode
from trustgraph.topics import tool_service_topics

from interop.venvs import UPSTREAM_211, Venv

pytestmark = [pytest.mark.interop, pytest.mark.timeout(600)]

HERE = Path(__file__).resolve().parent
REQ, RESP = tool_service_topics("interop-joke-211")
AGENT_REQUEST = "non-persistent://tg/request/agent:default:f"
AGENT_RESPONSE = "non-persistent://tg/response/agent:default:f"


@pytest.fixture(scope="session")
def venv_211() -> Venv:
    return UPSTREAM_211.ensure()


class Joke(DynamicToolService):
    default_topic = "interop-joke-211"

    async def invoke(self, config, arguments):
        return f"a joke about {arguments['topic']}"


async def dialog(request: v211.AgentRequest) -> tuple[list[bytes], list[bytes]]:
    """The agent's responses to ``request`` and the requests on its request topic, as bytes."""
    broker = MemoryBroker()
    async with worker(Joke, broker=broker), worker(Agent, broker=broker, wire="2.11") as w:
        d = w.flow_definition("f") | {"request": AGENT_REQUEST, "next": AGENT_REQUEST, "response": AGENT_RESPONSE}
        await w.open_flow("f", d)
        await w.configure({"tool": {"joke": {
            "type": "tool-service", "name": "joke", "description": "Tell a joke", "service": "joke-svc",
            "arguments": [{"name": "topic", "type": "string", "description": "what about"}]}},
            "tool-service": {"joke-svc": {"id": "joke-svc", "request-queue": REQ, "response-queue": RESP}}})
        prompt = ScriptedPrompt(replies=[action("joke", topic="cats"),
                                         final_answer(lambda t: t["history"][-1]["observation"])])
        await w.respond(d["prompt-request"], d["prompt-response"], PromptRequest, lambda req: [
            v211.PromptResponse(text=r.text or "", object=None, end_of_stream=r.end_of_stream, in_token=1,
                                out_token=1, model="m") for r in prompt(req)])
        requests = await w.listen(AGENT_REQUEST, v211.AgentRequest)
        replies = await w.listen(AGENT_RESPONSE, v211.AgentResponse)
        rid = await w.send(AGENT_REQUEST, request)
        got = await replies.wait_for(rid, lambda r: r.end_of_dialog)
        sent = requests.by_id(rid)
    # Our codec writes a record back to the bytes it decoded from (tests/unit/test_schema_v211.py).
    return [encode(r) for r in got], [encode(r) for r in sent]


def read_211(venv: Venv, responses: list[bytes], requests: list[bytes] = ()) -> dict:
    given = json.dumps({"responses": [p.decode() for p in responses], "requests": [p.decode() for p in requests]})
    r = subprocess.run([str(venv.python), str(HERE / "agent_reader_211.py")], input=given, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.mark.parametrize("streaming", [False, True], ids=["whole", "streamed"])
async def test_2_11s_gateway_and_client_read_our_agents_dialog(venv_211, row, streaming) -> None:
    responses, requests = await dialog(v211.AgentRequest(question="Tell me a joke about cats", streaming=streaming,
                                                         state=None))
    read = read_211(venv_211, responses, requests)
    chunks = [r.get("chunk") for r in read["responses"]]
    problems = [r.get("gateway_error") or r.get("client_error") for r in read["responses"]
                if "chunk" not in r]
    answer = "".join(c["content"] for c in chunks if c and c["class"] == "AgentAnswer")
    thoughts = [c for c in chunks if c and c["class"] == "AgentThought"]
    finals = [r["final"] for r in read["responses"] if "final" in r]
    ok = (not problems and answer == "a joke about cats" and finals[-1] is True and not any(finals[:-1])
          and {c["class"] for c in chunks} == {"AgentThought", "AgentObservation", "AgentAnswer"}
          and all(c["message_id"].startswith("urn:trustgraph:agent:") for c in thoughts))
    row("upstream 2.11.1 api-gateway translator and Python API (tg-invoke-agent's reader)",
        f"our agent --wire 2.11 -> 2.11.1's readers ({'streamed' if streaming else 'whole'} dialog with a "
        "tool call)", ok, "" if ok else f"problems {problems}, answer {answer!r}, finals {finals}")
    assert ok, read


async def test_2_11s_decoder_reads_our_agents_next_request(venv_211, row) -> None:
    _, requests = await dialog(v211.AgentRequest(question="Tell me a joke about cats", collection="mine"))
    read = read_211(venv_211, [], requests)
    first, nxt = read["requests"]
    step = nxt["history"][0] if nxt["history"] else {}
    ok = (nxt["session_id"] != "" and nxt["collection"] == "mine" and step.get("action") == "joke"
          and step.get("arguments") == {"topic": "cats"} and step.get("observation") == "a joke about cats")
    row("upstream 2.11.1 Pulsar decoder (an agent-manager-react replica of 2.11.1's)",
        "our agent --wire 2.11 -> its next-iteration AgentRequest", ok, "" if ok else f"got {nxt}")
    assert ok, read


async def test_what_2_11s_gateway_makes_of_an_agent_error(venv_211, row) -> None:
    responses, _ = await dialog(v211.AgentRequest(question="Plan it", pattern="supervisor"))
    (read,) = read_211(venv_211, responses)["responses"]
    decoded = read["decoded"]
    ok = (decoded["message_type"], decoded["end_of_dialog"], decoded["error"]["type"]) == (
        "error", True, "agent-error") and "'supervisor'" in decoded["error"]["message"]
    # 2.11.1's agent translator reads Error.code, which 2.11.1's Error does not have: its gateway
    # answers any agent error, its own agent's too, with a gateway-error naming that.
    row("upstream 2.11.1 Pulsar decoder and api-gateway translator",
        "our agent --wire 2.11 -> an error reply (a pattern for the orchestrator)", ok,
        f"gateway: {read.get('gateway_error') or 'passed'}")
    assert ok, read
