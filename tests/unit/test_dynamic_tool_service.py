"""DynamicToolService on the in-memory transport: what reaches invoke, and what comes back."""

from __future__ import annotations

import json

from trustgraph.base import DynamicToolService
from trustgraph.base.testing import worker
from trustgraph.base.tool_services.dynamic_tool_service import ToolError
from trustgraph.schema import ToolServiceRequest, ToolServiceResponse
from trustgraph.topics import tool_service_topics

REQ, RESP = tool_service_topics("unit-echo")


class Echo(DynamicToolService):
    """Records every invocation; streams when asked, fails with a ToolError when asked."""

    default_topic = "unit-echo"

    def __init__(self, **params):
        super().__init__(**params)
        self.invoked: list[dict] = []

    async def invoke(self, user, config, arguments):
        self.invoked.append(arguments)
        if arguments.get("fail"):
            raise ToolError(arguments["fail"], "echo-error")
        return {"user": user, "config": config, "arguments": arguments}


def request(**arguments) -> ToolServiceRequest:
    return ToolServiceRequest(user="u", config="{}", arguments=json.dumps(arguments))


def final(r: ToolServiceResponse) -> bool:
    return r.end_of_stream


async def test_request_without_id_never_reaches_invoke():
    # Concurrency 1: requests are handled in order, so once the second is answered
    # the first has been dealt with.
    async with worker(Echo, concurrency=1) as w:
        replies = await w.listen(RESP, ToolServiceResponse)
        await w.send(REQ, request(n=1), id=None)
        (answer,) = await w.call(REQ, RESP, request(n=2), ToolServiceResponse, until=final)
        assert json.loads(answer.response)["arguments"] == {"n": 2}
        assert w.processor.invoked == [{"n": 2}]
        assert replies.by_id(None) == [] and len(replies.messages) == 1


async def test_answers_errors_and_bad_input_without_dying():
    async with worker(Echo) as w:
        async def call(record):
            return await w.call(REQ, RESP, record, ToolServiceResponse, until=final)

        (ok,) = await call(ToolServiceRequest(user="", config='{"k": "v"}', arguments='{"a": 1}'))
        assert json.loads(ok.response) == {"user": "trustgraph", "config": {"k": "v"}, "arguments": {"a": 1}}
        (err,) = await call(request(fail="no"))
        assert (err.error.type, err.error.message, err.response, err.end_of_stream) == (
            "echo-error", "no", "", True)
        (err,) = await call(ToolServiceRequest(arguments="[1]"))
        assert (err.error.type, err.error.message) == (
            "tool-service-error", "request arguments must be a JSON object, got list")
        replies = await w.listen(RESP, ToolServiceResponse)
        rid = await w.send(REQ, b"garbage")
        (err,) = await replies.wait_for(rid)
        assert err.error.type == "tool-service-error" and err.error.message.startswith("malformed request")
        assert len(w.processor.invoked) == 2  # neither bad request reached invoke


class Chunky(DynamicToolService):
    """An invoke that returns an async generator (rather than being one): it still streams."""

    default_topic = "unit-echo"

    async def invoke(self, user, config, arguments):
        async def words():
            for w in ("a", "b", "c"):
                yield w

        return words()


async def test_an_invoke_that_returns_an_async_generator_streams():
    async with worker(Chunky) as w:
        got = await w.call(REQ, RESP, request(), ToolServiceResponse, until=final)
        assert [(r.response, r.end_of_stream) for r in got] == [("a", False), ("b", False), ("c", False),
                                                               ("", True)]


class Echo211(DynamicToolService):
    """Written for TrustGraph 2.11: ``invoke(config, arguments)``, no user."""

    default_topic = "unit-echo"

    async def invoke(self, config, arguments):
        return {"config": config, "arguments": arguments}


async def test_a_service_written_for_2_11_gets_config_and_arguments_only():
    async with worker(Echo211) as w:
        (ok,) = await w.call(REQ, RESP, ToolServiceRequest(user="u", config='{"k": "v"}', arguments='{"a": 1}'),
                             ToolServiceResponse, until=final)
        assert json.loads(ok.response) == {"config": {"k": "v"}, "arguments": {"a": 1}}


def test_which_invoke_a_service_wrote_is_read_from_its_signature():
    from trustgraph.base.tool_services.dynamic_tool_service import takes_user

    class Old:
        async def invoke(self, user, config, arguments): ...

    class New:
        async def invoke(self, config, arguments): ...

    class Loose:
        async def invoke(self, *args): ...

    assert takes_user(Old().invoke) and not takes_user(New().invoke) and takes_user(Loose().invoke)
