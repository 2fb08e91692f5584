"""The gateway's streams: import/export websockets and the knowledge-core endpoints.

* ``GET /api/v1/flow/{flow}/import/{kind}``: every frame the client sends is
  one record published on the flow's ``{kind}-store`` interface (triples,
  graph-embeddings, document-embeddings, entity-contexts (``-load``), rows);
* ``GET /api/v1/flow/{flow}/export/{kind}``: every record on that interface
  from now on is one frame to the client, under a subscription of its own,
  removed from the broker when the socket ends;
* ``POST /api/v1/import-core?id=&user=``: a msgpack stream of ``("t",
  {"m": {"m": metadata}, "t": triples})`` and ``("ge", {"m": ..., "e":
  [{"e": entity, "v": vectors}]})`` items, each stored with the knowledge
  service's ``put-kg-core``;
* ``GET /api/v1/export-core?id=&user=``: the core's ``get-kg-core`` stream
  in the same msgpack form (``m`` carrying ``i``, ``m``, ``u``, ``c``).

Formats are upstream's.  A routing problem on a socket is one ``{"error":
text}`` frame, then the socket closes; a bad frame is answered with an
error frame and the socket goes on.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import Any

import msgpack
from aiohttp import WSMsgType, web
from trustgraph.base.messaging.pubsub import PubSubError
from trustgraph.base.safety import limits
from trustgraph.topics import TopicError

from .connections import body_chunks
from .dispatch import Dispatcher, RoutingError
from .translators import EXPORTS, IMPORTS, BadRequest, JsonObject, OneWay, interface_name

logger = logging.getLogger(__name__)

MAX_FRAME = limits.MAX_BODY
READ_CHUNK = 128 * 1024


def _one_way(table: dict[str, OneWay], flow: str, kind: str, dispatcher: Dispatcher) -> tuple[OneWay, str]:
    """The translation and topic of an import or export, checked in upstream's order."""
    if flow not in dispatcher.flows:
        raise RoutingError("Invalid flow")
    one_way = table.get(kind)
    if one_way is None:
        raise RoutingError("Invalid kind")
    return one_way, dispatcher.interface_topic(flow, interface_name(kind))


async def _refuse(ws: web.WebSocketResponse, text: str) -> web.WebSocketResponse:
    await ws.send_json({"error": text})
    await ws.close()
    return ws


async def import_socket(request: web.Request, dispatcher: Dispatcher) -> web.WebSocketResponse:
    """Publish one record per frame until the client closes."""
    ws = web.WebSocketResponse(max_msg_size=MAX_FRAME, heartbeat=30.0)
    await ws.prepare(request)
    try:
        one_way, topic = _one_way(IMPORTS, request.match_info["flow"], request.match_info["kind"], dispatcher)
        producer = await dispatcher.producer(topic)
    except (RoutingError, PubSubError, TopicError) as e:
        return await _refuse(ws, str(e))
    async for msg in ws:
        if msg.type not in (WSMsgType.TEXT, WSMsgType.BINARY):
            continue
        try:
            await producer.send(one_way.request(limits.loads(msg.data)))
        except ValueError as e:  # bad JSON, JSON over the limits, or a BadRequest
            text = (str(e) if isinstance(e, BadRequest) else f"Bad message: {e}"
                    if isinstance(e, limits.JsonLimitError) else f"Bad message: not valid JSON ({e})")
            await ws.send_json({"error": text})
        except PubSubError as e:
            logger.warning("Import %s failed: %s", one_way.kind, e)
            await ws.send_json({"error": str(e)})
    return ws


async def export_socket(request: web.Request, dispatcher: Dispatcher, send_timeout: float) -> web.WebSocketResponse:
    """Send one frame per record on the interface, until the client closes."""
    ws = web.WebSocketResponse(max_msg_size=MAX_FRAME, heartbeat=30.0)
    await ws.prepare(request)
    try:
        one_way, topic = _one_way(EXPORTS, request.match_info["flow"], request.match_info["kind"], dispatcher)
    except RoutingError as e:
        return await _refuse(ws, str(e))
    assert one_way.decode is not None

    async def forward(msg: Any) -> None:
        if ws.closed:
            return
        try:
            async with asyncio.timeout(send_timeout):
                await ws.send_json(one_way.decode(msg.value))
        except (ConnectionError, RuntimeError, TimeoutError):
            await ws.close()

    subscription = f"api-gateway-{uuid.uuid4()}"
    try:
        consumer = await dispatcher.pubsub.consumer(topic, subscription, one_way.schema,
                                                    handler=forward, concurrency=1, own=True)
    except (PubSubError, TopicError) as e:
        return await _refuse(ws, str(e))
    logger.info("Export of %s to a socket: subscription %s", topic, subscription)
    try:
        async for _msg in ws:  # the client sends nothing; this waits for it to close
            pass
    finally:
        # The subscription is this socket's alone: removed, not just closed, or the broker
        # would keep every later record of a persistent topic for it (as upstream's export).
        await dispatcher.pubsub.remove(consumer, unsubscribe=True)
        logger.info("Export of %s ended: subscription %s removed", topic, subscription)
    return ws


def _core_put(user: str, core: str, item: Any) -> JsonObject | None:
    """One msgpack item of an import-core stream as a put-kg-core request (None: skip it)."""
    if not isinstance(item, (list, tuple)) or len(item) != 2 or not isinstance(item[1], dict):
        return None
    kind, data = item
    metadata = {"id": core, "metadata": (data.get("m") or {}).get("m") or [], "user": user,
                "collection": "default"}
    request: JsonObject = {"operation": "put-kg-core", "user": user, "id": core}
    if kind == "t":
        request["triples"] = {"metadata": metadata, "triples": data.get("t") or []}
    elif kind == "ge":
        request["graph-embeddings"] = {"metadata": metadata, "entities": [
            {"entity": e.get("e"), "vectors": e.get("v")} for e in data.get("e") or []]}
    else:
        return None
    return request


async def import_core(request: web.Request, dispatcher: Dispatcher) -> web.Response:
    """Store a msgpack knowledge-core stream (read at the body pace of connections.py); 200 when
    every part was stored."""
    core, user = request.query.get("id"), request.query.get("user")
    if not core or not user:
        return web.json_response({"error": "Bad request: 'id' and 'user' are required"}, status=400)
    unpacker = msgpack.Unpacker(raw=False, max_buffer_size=limits.MAX_BODY)
    try:
        async for chunk in body_chunks(request, size=READ_CHUNK):
            unpacker.feed(chunk)
            for item in unpacker:
                limits.check_depth(item)  # a JsonLimitError is a ValueError: refused below
                body = _core_put(user, core, item)
                if body is None:
                    continue
                reply = await dispatcher.call("knowledge", None, body)
                if "error" in reply:
                    return web.json_response(reply, status=500)
    except (msgpack.UnpackException, ValueError) as e:
        return web.json_response({"error": f"Bad request: not a msgpack stream ({e})"}, status=400)
    except (RoutingError, BadRequest) as e:
        return web.json_response({"error": str(e)}, status=500)
    return web.Response(status=200)


def _core_item(reply: JsonObject) -> bytes | None:
    def meta(m: JsonObject) -> JsonObject:
        return {"i": m.get("id"), "m": m.get("metadata"), "u": m.get("user"), "c": m.get("collection")}

    if "triples" in reply:
        t = reply["triples"]
        return msgpack.packb(("t", {"m": meta(t["metadata"]), "t": t["triples"]}))
    if "graph-embeddings" in reply:
        g = reply["graph-embeddings"]
        return msgpack.packb(("ge", {"m": meta(g["metadata"]), "e": [
            {"e": e["entity"], "v": e["vectors"]} for e in g["entities"]]}))
    return None


async def export_core(request: web.Request, dispatcher: Dispatcher) -> web.StreamResponse:
    """Stream a knowledge core as msgpack items."""
    core, user = request.query.get("id"), request.query.get("user")
    if not core or not user:
        return web.json_response({"error": "Bad request: 'id' and 'user' are required"}, status=400)
    response = web.StreamResponse(headers={"Content-Type": "application/octet-stream"})
    await response.prepare(request)

    async def write(reply: JsonObject, _final: bool) -> None:
        item = _core_item(reply)
        if item is not None:
            await response.write(item)
        elif "error" in reply:
            logger.warning("export-core %s: %s", core, reply["error"])

    try:
        await dispatcher.call("knowledge", None, {"operation": "get-kg-core", "user": user, "id": core}, write)
    except (RoutingError, BadRequest) as e:
        logger.warning("export-core %s: %s", core, e)
    await response.write_eof()
    return response
