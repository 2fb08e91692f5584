"""The interop suite's fixtures and its report (INTEROP.md).

Upstream TrustGraph 2.1.4 runs from venvs of its own (``interop/venvs.py``,
created once from PyPI under ``.interop/``, the suite's only use of the
network); our side runs from the project's venv.  Each test records rows
``(peer, direction, result)`` with :func:`row`; ``make interop`` sets
``INTEROP_REPORT`` and the session writes them to INTEROP.md.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "integration"))

from interop.venvs import UPSTREAM, Venv, ensure_flow_on_ours, ensure_mixed  # noqa: E402

_ROWS: list[tuple[str, int, int, str, str, str, str]] = []  # (module, line, n, peer, direction, result, detail)

#: INTEROP.md's sections, in order: the test module, its title and what its rows run.
SECTIONS = {
    "test_upstream_deployment.py": (
        "Upstream processes and ours on one broker",
        "Upstream 2.1.4's `agent-manager-react`, `prompt-template`, `api-gateway` and `joke-service`\n"
        "(a DynamicToolService) run as processes from `.interop/upstream` beside ours (config-svc,\n"
        "api-gateway, prompt-template, agent-manager-react, `text-completion-scripted`, joke-service),\n"
        "on one pulsar-lite broker with the default topics (`tests/interop/deployment.py`), with a test\n"
        "agent-react template and with the shipped one (`config-examples`). Each row asks through a\n"
        "gateway or a command and checks the thoughts, the tool's observation (the joke the service\n"
        "told), the answer or the config value, streamed and whole. The LLM is the one the direction\n"
        "names: our `text-completion-scripted` (a deterministic stand-in that answers by rules), or\n"
        "our `text-completion-openai` in front of an OpenAI-compatible stand-in on 127.0.0.1 that sees\n"
        "only the chat messages. So a row proves that those processes read each other's records and\n"
        "topics through a whole dialog; it says nothing of how a real model chooses."),
    "test_upstream_peers.py": (
        "Upstream's Python client, prompt manager and DynamicToolService",
        "Upstream code run from `.interop/upstream` against our gateway, config and client."),
    "test_upstream_211.py": (
        "Upstream 2.11.1's tool services and ours",
        "Upstream 2.11.1 (`.interop/upstream-2.11`, PyPI), whose tool-service requests have no `user`\n"
        "and whose services write `invoke(config, arguments)`: its joke-service called by our client,\n"
        "and its own request-response client and records calling our joke-service, and calling a\n"
        "streaming service of ours, whose answer its first-reply `request()` gets whole."),
    "test_agent_211_readers.py": (
        "Our agent under --wire 2.11, read by upstream 2.11.1",
        "Our agent-manager-react with `--wire 2.11` runs a dialog (a tool call, then the answer) on the\n"
        "in-memory transport; each message it sent goes, as its bytes, to 2.11.1's own Pulsar decoder,\n"
        "api-gateway agent translator and Python API socket client (what `tg-invoke-agent` reads), run\n"
        "from `.interop/upstream-2.11`. No 2.11.1 process runs: the rows prove the records and shapes."),
    "test_upstream_211_deployment.py": (
        "Our agent in a TrustGraph 2.11.1 deployment",
        "Upstream 2.11.1's `api-gateway` (port and first-frame websocket auth as 2.11's, beside its own\n"
        "`no-auth-svc` IAM), `prompt-template`, `text-completion-openai`, `mcp-tool` and `joke-service`, run as processes\n"
        "from `.interop/upstream-2.11` (PyPI), with our `agent-manager-react --wire 2.11` in place of 2.11.1's\n"
        "agent and our `joke-service --wire 2.11`, on one pulsar-lite broker (`tests/interop/deployment_211.py`).\n"
        "Config and flows are in our `config-svc --wire 2.11`, in place of 2.11's config-svc and flow-svc,\n"
        "which keep them in Cassandra (not available here); they go in through 2.11.1's gateway with\n"
        "2.11.1's commands: prompts, `tool-service` and `tool` descriptors with `tg-put-config-item`, a flow\n"
        "blueprint in 2.11's form (2.11.1's prompt, LLM and mcp-tool processors and our agent) with\n"
        "`tg-put-flow-blueprint` and `tg-start-flow`. Each row runs 2.11.1's `tg-invoke-agent -v` (or a REST\n"
        "call) against 2.11.1's gateway and checks the thoughts, the observation (the joke the tool service\n"
        "told, asked of it directly first; for the built-in types `text-completion` and `mcp-tool`, the\n"
        "model's answer through 2.11.1's prompt-template and text-completion-openai, or what a real MCP\n"
        "server of the official SDK on 127.0.0.1 answered 2.11.1's mcp-tool) and the answer, which repeats\n"
        "it. The LLM is an\n"
        "OpenAI-compatible stand-in of ours on 127.0.0.1 that answers by rules from what 2.11.1's openai\n"
        "processor sends it: the rows prove that the processors read each other's records and queues\n"
        "through whole dialogs, nothing of how a real model chooses. Not covered: an IAM other than the\n"
        "no-auth one, workspaces other than `default`, the orchestrator's patterns (an agent error cannot\n"
        "reach a 2.11.1 client at all: its gateway fails on it, the row says so)."),
    "test_upstream_211_rabbitmq.py": (
        "Our agent in a TrustGraph 2.11.1 deployment on RabbitMQ",
        "The deployment of the section above (`tests/interop/deployment_211.py`) with every process on one\n"
        "real RabbitMQ node instead of pulsar-lite: 2.11.1's processors with their own RabbitMQ backend\n"
        "(aio-pika), ours with `--wire 2.11`, which declares 2.11.1's exchanges and queues argument for\n"
        "argument; all given `--pubsub-backend rabbitmq` and the node's `--rabbitmq-host/-port/-username/-vhost`,\n"
        "the password in `$RABBITMQ_PASSWORD`. No Pulsar runs. The rows ask and check as the Pulsar ones do,\n"
        "with our joke-service, 2.11.1's `mcp-tool` (a flow ToolService) and a `text-completion` tool.\n"
        "2.11.1's `joke-service` cannot serve on RabbitMQ: like every 2.11.1 DynamicToolService it names its\n"
        "queues as Pulsar URLs, which its own RabbitMQ backend refuses; its row says so. On 2.11.1's topology a\n"
        "request queue outlives its consumers, so a processor of ours put in place of 2.11.1's must consume the\n"
        "queue that one left: the last row asks 2.11.1's own code for the queue name of the agent's request\n"
        "consumer and finds it on the node, consumed by ours, and no other queue bound there."),
    "test_upstream_flow_commands.py": (
        "Upstream's processors on our trustgraph-base: every command",
        "Every console script of upstream trustgraph-flow 2.1.4 imported and run with `--help` in\n"
        "`.interop/flow-on-ours` (our trustgraph-base, upstream's trustgraph-flow `--no-deps` and its\n"
        "third-party requirements) and in `.interop/upstream-flow` (the same on upstream's own base), by\n"
        "`interop/upstream_processors.py`: a command that starts on upstream's base must start on ours.\n"
        "Upstream 2.1.4's own unit tests of that API, run by hand in `.interop/flow-on-ours` (2026-12-04;\n"
        "not copied into this repository), and how many of their behaviours our own tests cover: the LLM\n"
        "service base and its providers 133 of 133 pass (our tests cover the 6 behaviours of\n"
        "`test_llm_service_parameters.py`); the query, storage, chunking and embeddings processors 434 pass,\n"
        "as many as on upstream's base (ours cover 6 of 7 embeddings contract behaviours and 9 of 13 of the\n"
        "chunking base's); `trustgraph.messaging`'s translators 122 of 130 (the 8 others build a field\n"
        "2.1.4's schema lacks and fail on upstream's base too; ours cover about 73); `cassandra_config`\n"
        "25 of 25 (ours cover 24); the processor surface and flow client specs: ours cover 34 of 43; the\n"
        "pub/sub classes: ours cover 13 of 14 (the 14th, nacking pending messages at shutdown, has nothing\n"
        "to act on: ours acknowledge a message once it is handed over)."),
    "test_upstream_flow_prompt.py": (
        "Upstream's processors on our trustgraph-base: prompt-template",
        "Upstream trustgraph-flow 2.1.4's own console scripts, unchanged from PyPI, run from\n"
        "`.interop/flow-on-ours` (our trustgraph-base under upstream's trustgraph-flow, `--no-deps`), each a\n"
        "process on pulsar-lite following our config-svc; everything under upstream's code is ours (the\n"
        "compatibility layer, `trustgraph.compat.v214`, on our messaging core). Here its `prompt-template` in\n"
        "front of our `text-completion-scripted`: text, JSON and streamed answers, an unknown template's error."),
    "test_upstream_flow_agent.py": (
        "Upstream's processors on our trustgraph-base: agent-manager-react",
        "Upstream 2.1.4's `agent-manager-react` from `.interop/flow-on-ours` with our prompt-template,\n"
        "scripted model and joke-service: a tool call through upstream's ToolServiceImpl, then the answer,\n"
        "streamed and not."),
    "test_upstream_flow_mcp_tool.py": (
        "Upstream's processors on our trustgraph-base: mcp-tool",
        "Upstream 2.1.4's `mcp-tool` from `.interop/flow-on-ours` calling a real MCP server of the official\n"
        "SDK on 127.0.0.1: text, a structured result, a tool's error result, an unknown tool."),
    "test_mcp_sdk_revisions.py": (
        "MCP 2025-11-25 and 2026-07-28: the official SDK's clients and servers and ours",
        "The official MCP SDK of each era beside ours: mcp 2.3 (the project's venv), whose client is forced to\n"
        "one revision by `mode` (`legacy` is the 2025-11-25 handshake, `2026-07-28` the stateless revision,\n"
        "`auto` asks `server/discover`) and whose server speaks both (limited to 2026-07-28 by a front in\n"
        "`tests/integration/mcp_stand_in.py` that refuses `initialize` as a 2026-only server does: the SDK\n"
        "cannot be told to), and mcp 1.30, the last of the session era (`.interop/mcp-2025`), client and\n"
        "server. Ours: mcp-server in-process in front of our joke-service (and a tool service that waits,\n"
        "for the tasks rows: the SDK has the extension machinery, not the tasks extension, so the client's\n"
        "part of it is the tests' own, `tests/integration/mcp_tasks.py`), mcp-tool as a process, and\n"
        "`tg-import-mcp-tools`, all on pulsar-lite."),
    "test_upstream_flow_llm.py": (
        "Upstream's processors on our trustgraph-base: text-completion-openai",
        "Upstream 2.1.4's own `text-completion-openai` from `.interop/flow-on-ours`, beside our config-svc,\n"
        "in front of the OpenAI-compatible stand-in on 127.0.0.1: a request answered whole and one streamed.\n"
        "Its `LlmService` is the compatibility layer over our LLM service base."),
    "test_upstream_flow_chunker.py": (
        "Upstream's processors on our trustgraph-base: chunker-recursive",
        "Upstream 2.1.4's `chunker-recursive` from `.interop/flow-on-ours`, its flow given by our config-svc,\n"
        "with a librarian stand-in of ours: a text document sent on its input topic comes out as upstream's\n"
        "chunks, provenance triples and child documents. (`chunker-token` fetches tiktoken's encoding file\n"
        "from the network at start, on upstream's base too, and is not run.)"),
    "test_upstream_flow_kg_extract.py": (
        "Upstream's processors on our trustgraph-base: kg-extract-definitions and kg-extract-relationships",
        "Upstream 2.1.4's `kg-extract-definitions` and `kg-extract-relationships` from `.interop/flow-on-ours`,\n"
        "reading one chunk topic, with our prompt-template (two templates of the test's own under upstream's\n"
        "names, JSON answers) and scripted model behind their `PromptClientSpec`. A chunk sent comes out as\n"
        "the triples (labels, definitions or relationships, `subjectOf` the chunk, each fact's provenance with\n"
        "the flow's `llm-model` and `ontology`) and entity contexts upstream's code builds, compared whole, in\n"
        "the batch sizes given on the command line; an answer `[]`, a JSON object and a prompt error send\n"
        "nothing, and the next chunk is served. (`kg-extract-agent`, `-topics`, `-rows` and `-ontology` are\n"
        "not run.) Upstream 2.1.4 has no unit test of these two processors; its 13 integration tests of them\n"
        "(`test_kg_extract_store_integration.py`, on a mocked flow) check behaviours these rows cover but one,\n"
        "a timing bound over 100 chunks."),
    "test_upstream_flow_gateway.py": (
        "Upstream's processors on our trustgraph-base: api-gateway",
        "Upstream 2.1.4's `api-gateway` from `.interop/flow-on-ours` (its Publisher/Subscriber requestors\n"
        "and config Consumer on our messaging) in front of our config-svc: config put, get and list-flows."),
    "test_upstream_cli.py": (
        "Upstream's command line",
        "Upstream's `trustgraph-cli` against our gateway and config-svc, and every upstream command's\n"
        "`--help` with upstream's CLI installed over our `trustgraph-base` (`.interop/mixed`). The\n"
        "`--help` rows prove only that each upstream command imports and starts there: in that venv\n"
        "upstream's `trustgraph-cli` 2.1.4 is installed in place of ours, so they test none of ours."),
    "test_cli_distribution.py": (
        "Our trustgraph-cli and upstream's in one venv",
        "Fresh venvs (PyPI and the checkout), installed in the order each direction names, plain or\n"
        "editable: which distribution owns the commands afterwards, whether every command starts\n"
        "(`--help`), and what uninstalling one distribution leaves. Our `trustgraph-cli` 2.1.100 carries\n"
        "every command name of upstream's 2.1.4; the 46 upstream ones this fork does not reimplement\n"
        "run upstream's own code once `tg-install-upstream-commands` has fetched it, and their rows\n"
        "prove only that each starts there."),
}


@pytest.fixture(scope="session")
def upstream_venv() -> Venv:
    return UPSTREAM.ensure()


@pytest.fixture(scope="session")
def mixed_venv() -> Venv:
    return ensure_mixed()


@pytest.fixture(scope="session")
def flow_on_ours() -> Venv:
    """Our trustgraph-base under upstream's trustgraph-flow 2.1.4 (the test_upstream_flow_* rows)."""
    return ensure_flow_on_ours()


@pytest.fixture
async def stack(broker, spawn, tmp_path):
    """A config-svc of the test's own on the broker (``tests/integration/flow_stack.py``)."""
    from flow_stack import Stack

    s = Stack(broker, spawn, tmp_path)
    yield s
    await s.close()


@pytest.fixture
def procs():
    """Processes a test started itself (``support.Proc``), stopped when it ends."""
    started: list[Any] = []
    yield started
    for p in started:
        p.stop()


@pytest.fixture
def row(record_property: Any):
    """``row(peer, direction, ok, detail="")``: one line of INTEROP.md."""
    def add(peer: str, direction: str, ok: bool, detail: str = "") -> None:
        record_property("interop-row", (peer, direction, "pass" if ok else "FAIL", detail))
    return add


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Collect the rows; a test that failed without recording one (its setup failed: a peer that
    never came up) is a FAIL row of its own, so the report never looks better than the run."""
    module = Path(report.nodeid.split("::", 1)[0]).name
    line = report.location[1] or 0  # rows are reported in the order of the tests in their module
    rows = [value for name, value in report.user_properties if name == "interop-row"]
    if report.when == "call":
        _ROWS.extend((module, line, n, *value) for n, value in enumerate(rows))
    if report.failed and not rows and report.when in ("setup", "call"):
        crash = getattr(report.longrepr, "reprcrash", None)
        text = crash.message if crash is not None else report.longreprtext
        reason = (text.strip().splitlines() or [""])[0][:200]
        _ROWS.append((module, line, 0, report.nodeid.split("::", 1)[-1], f"(test {report.when} failed)",
                      "FAIL", reason))


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_report(found: list[tuple[str, int, int, str, str, str, str]]) -> str:
    """INTEROP.md: the failing rows first, then one table per section, rows in test order."""
    rows: list[tuple[str, str, str, str, str]] = []
    for module, _line, _n, *row in sorted(found, key=lambda r: (r[0], r[1], r[3], r[2])):
        if (module, *row) not in rows:  # a parametrized test may record the same row twice
            rows.append((module, *row))
    failed = [r for r in rows if r[3] != "pass"]
    lines = ["# Interop with upstream TrustGraph 2.1.4 and 2.11.1", "",
             "Written by `make interop` (`tests/interop`; `make test` runs all but the long ones). Upstream runs",
             "from venvs made once from PyPI (`interop/venvs.py`); ours from the checkout.", "",
             f"**{len(rows) - len(failed)} of {len(rows)} rows pass.**", ""]
    if failed:
        lines += ["Failing:", ""] + [f"- {_cell(peer)} ({_cell(direction)}): {_cell(detail)}"
                                     for _, peer, direction, _, detail in failed] + [""]
    order = list(SECTIONS) + sorted({r[0] for r in rows} - set(SECTIONS))
    for module in order:
        mine = [r for r in rows if r[0] == module]
        if not mine:
            continue
        title, about = SECTIONS.get(module, (module, ""))
        lines += [f"## {title}", ""] + ([about, ""] if about else [])
        lines += ["| peer | direction | result | detail |", "|---|---|---|---|"]
        lines += [f"| {_cell(peer)} | {_cell(direction)} | {result} | {_cell(detail)} |"
                  for _, peer, direction, result, detail in mine]
        lines.append("")
    return "\n".join(lines)


def pytest_sessionfinish(session: pytest.Session) -> None:
    target = os.environ.get("INTEROP_REPORT")
    if not target or not _ROWS or hasattr(session.config, "workerinput"):
        return
    Path(target).write_text(render_report(_ROWS))
