"""What upstream TrustGraph 2.11.1 makes of agent messages: its own decoder, gateway and client.

Runs with ``.interop/upstream-2.11/bin/python``.  Reads a JSON object from stdin,
``{"responses": [payload, ...], "requests": [payload, ...]}`` (payloads as they travel on
Pulsar), and prints, for each response, what 2.11.1's Pulsar backend decodes
(``serialization.dict_to_dataclass``), what its api-gateway's agent translator makes of that for
the websocket (or the exception it raises), and what its Python API's socket client
(``SocketClient._parse_chunk``, what ``tg-invoke-agent`` iterates) turns the frame into; for
each request, the 2.11.1 AgentRequest it decodes to.
"""
import dataclasses
import importlib.util
import json
import sys
import types

# The venv holds trustgraph-base without aiohttp, which only 2.11.1's async clients use; its
# package __init__ imports them, so a placeholder lets the sync socket client load.
if importlib.util.find_spec("aiohttp") is None:
    sys.modules["aiohttp"] = types.ModuleType("aiohttp")

from trustgraph.api.socket_client import SocketClient  # noqa: E402
from trustgraph.base.serialization import dict_to_dataclass  # noqa: E402
from trustgraph.messaging import TranslatorRegistry  # noqa: E402
from trustgraph.schema import AgentRequest, AgentResponse  # noqa: E402


def read_response(payload: str, client: SocketClient) -> dict:
    value = dict_to_dataclass(json.loads(payload), AgentResponse)
    out = {"decoded": dataclasses.asdict(value)}
    try:
        frame, final = TranslatorRegistry.get_response_translator("agent").encode_with_completion(value)
    except Exception as e:  # what the gateway would turn into a gateway-error
        out["gateway_error"] = f"{type(e).__name__}: {e}"
        return out
    out["frame"], out["final"] = frame, final
    if "error" in frame:
        out["client_error"] = frame["error"]
        return out
    chunk = client._parse_chunk(frame)
    out["chunk"] = None if chunk is None else {"class": type(chunk).__name__, **dataclasses.asdict(chunk)}
    return out


def main() -> None:
    given = json.load(sys.stdin)
    client = SocketClient("http://localhost:8888/", 60, None)
    print(json.dumps({
        "responses": [read_response(p, client) for p in given.get("responses", [])],
        "requests": [dataclasses.asdict(dict_to_dataclass(json.loads(p), AgentRequest))
                     for p in given.get("requests", [])],
    }))


if __name__ == "__main__":
    main()
