"""A TrustGraph 2.11.1 caller of a tool service: 2.11's own pub/sub backend, request-response
client and records (whose ToolServiceRequest has no ``user``).

Runs with ``.interop/upstream-2.11/bin/python``, never with the project's interpreter (2.11.1's
own ToolServiceClient cannot be built: it has no constructor).  Usage: ``caller_211.py
PULSAR_URL TOPIC [stream]``; prints the response as JSON.
"""
import asyncio
import json
import sys

from trustgraph.base.pubsub import get_async_pubsub
from trustgraph.base.request_response_client import RequestResponseClient
from trustgraph.schema import ToolServiceRequest, ToolServiceResponse


async def main(url: str, topic: str, streaming: bool) -> None:
    backend = get_async_pubsub(pulsar_host=url)
    client = await RequestResponseClient.create(
        backend=backend, request_topic=f"non-persistent://tg/request/{topic}",
        response_topic=f"non-persistent://tg/response/{topic}",
        request_schema=ToolServiceRequest, response_schema=ToolServiceResponse)
    request = ToolServiceRequest(config=json.dumps({"style": "pun"}), arguments=json.dumps({"topic": "cats"}))
    if streaming:
        chunks = []
        async for resp in client.request_stream(request, timeout=10):
            chunks.append({"response": resp.response, "end": resp.end_of_stream,
                           "error": resp.error.message if resp.error else None})
            if resp.end_of_stream:
                break
        print(json.dumps(chunks))
    else:
        resp = await client.request(request, timeout=10)
        print(json.dumps({"response": resp.response, "error": resp.error.message if resp.error else None}))
    await client.close()


asyncio.run(main(sys.argv[1], sys.argv[2], len(sys.argv) > 3))
