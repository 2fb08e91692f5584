"""A TrustGraph 2.11.1 caller of a tool service: 2.11's own pub/sub backend, request-response
client and records (whose ToolServiceRequest has no ``user``).

Runs with ``.interop/upstream-2.11/bin/python``, never with the project's interpreter (2.11.1's
own ToolServiceClient cannot be built: it has no constructor).  Usage: ``caller_211.py
BROKER_URL TOPIC [stream] [--config JSON] [--arguments JSON]`` (default: the joke service's
``{"style": "pun"}`` and ``{"topic": "cats"}``); prints the response (``stream``: the list of
responses) as JSON.  ``BROKER_URL`` is Pulsar's, or ``amqp://USER@HOST:PORT/`` for 2.11.1's RabbitMQ
backend, which reads the password from ``$RABBITMQ_PASSWORD`` and takes queue names in 2.11's form
only (``request:tg:TOPIC``: the same exchange as a Pulsar name's, ``tg.request.TOPIC``).
"""
import argparse
import asyncio
import contextlib
import json
import os
import sys
from urllib.parse import urlsplit

from trustgraph.base.pubsub import get_async_pubsub
from trustgraph.base.request_response_client import RequestResponseClient
from trustgraph.schema import ToolServiceRequest, ToolServiceResponse


def record(resp: ToolServiceResponse) -> dict:
    return {"response": resp.response, "end": resp.end_of_stream,
            "error": resp.error.message if resp.error else None}


async def main(args: argparse.Namespace) -> None:
    url = urlsplit(args.url)
    if url.scheme == "amqp":
        backend = get_async_pubsub(pubsub_backend="rabbitmq", rabbitmq_host=url.hostname, rabbitmq_port=url.port,
                                   rabbitmq_username=url.username)
        request_topic, response_topic = f"request:tg:{args.topic}", f"response:tg:{args.topic}"
    else:
        backend = get_async_pubsub(pulsar_host=args.url)
        request_topic = f"non-persistent://tg/request/{args.topic}"
        response_topic = f"non-persistent://tg/response/{args.topic}"
    client = await RequestResponseClient.create(
        backend=backend, request_topic=request_topic, response_topic=response_topic,
        request_schema=ToolServiceRequest, response_schema=ToolServiceResponse)
    request = ToolServiceRequest(config=args.config, arguments=args.arguments)
    if args.mode == "stream":
        chunks = []
        async with contextlib.aclosing(client.request_stream(request, timeout=10)) as responses:
            async for resp in responses:
                chunks.append(record(resp))
                if resp.end_of_stream:
                    break
        print(json.dumps(chunks))
    else:
        print(json.dumps(record(await client.request(request, timeout=10))))
    await client.close()


parser = argparse.ArgumentParser()
parser.add_argument("url")
parser.add_argument("topic")
parser.add_argument("mode", nargs="?", choices=["stream"])
parser.add_argument("--config", default=json.dumps({"style": "pun"}))
parser.add_argument("--arguments", default=json.dumps({"topic": "cats"}))
asyncio.run(main(parser.parse_args()))
# The answer is out: leave without the interpreter's teardown, in which 2.11.1's pulsar client
# (its I/O threads still running) aborts the process now and then (SIGABRT, "terminate called
# without an active exception", or SIGSEGV), which would fail a row whose call succeeded.
sys.stdout.flush()
os._exit(0)
