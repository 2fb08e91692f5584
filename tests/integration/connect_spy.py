"""A TCP proxy in front of a broker that records what each client says in its Pulsar CONNECT.

pulsar-lite does not check credentials, so a test of "this process
authenticates as this role" looks at what goes over the wire instead: every
connection through the spy is forwarded byte for byte to the broker, and the
first frame (the binary protocol's ``CONNECT`` command) is decoded for its
``auth_method_name`` and ``auth_data``.  What the broker would then permit
is what only a real Pulsar cluster with authorization enforces.

Frames are ``[total size][command size][BaseCommand]`` (big-endian 32-bit
sizes, protobuf); ``BaseCommand.type`` 2 is CONNECT and field 2 its body,
whose fields 5 and 3 are the method name and the credentials.
"""

from __future__ import annotations

import asyncio
import socket
import struct
import threading
from dataclasses import dataclass


@dataclass(frozen=True)
class Connect:
    method: str
    data: bytes

    @property
    def token(self) -> str | None:
        return self.data.decode() if self.method == "token" else None


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    shift = value = 0
    while True:
        b = buf[i]
        i += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, i
        shift += 7


def _fields(buf: bytes) -> dict[int, list[int | bytes]]:
    """A protobuf message's fields (varints and length-delimited ones; others are not used here)."""
    out: dict[int, list[int | bytes]] = {}
    i = 0
    while i < len(buf):
        key, i = _varint(buf, i)
        number, kind = key >> 3, key & 7
        if kind == 0:
            value, i = _varint(buf, i)
        elif kind == 2:
            n, i = _varint(buf, i)
            value, i = buf[i:i + n], i + n
        elif kind == 5:
            value, i = buf[i:i + 4], i + 4
        elif kind == 1:
            value, i = buf[i:i + 8], i + 8
        else:
            raise ValueError(f"protobuf wire type {kind} not expected in CONNECT")
        out.setdefault(number, []).append(value)
    return out


def parse_connect(frame: bytes) -> Connect | None:
    """The CONNECT of a client's first frame (None when it is another command)."""
    (cmd_size,) = struct.unpack(">I", frame[4:8])
    base = _fields(frame[8:8 + cmd_size])
    if base.get(1, [None])[0] != 2 or 2 not in base:
        return None
    connect = _fields(base[2][0])
    method = connect.get(5, [b""])[0]
    data = connect.get(3, [b""])[0]
    return Connect(method.decode() if isinstance(method, bytes) else "", data if isinstance(data, bytes) else b"")


class ConnectSpy:
    """``ConnectSpy(broker_port).start()``; ``url`` for clients; ``connects`` as they arrive."""

    def __init__(self, broker_port: int, broker_host: str = "127.0.0.1") -> None:
        self.target = (broker_host, broker_port)
        self.connects: list[Connect] = []
        self._lock = threading.Lock()
        self._loop = asyncio.new_event_loop()
        self._server: asyncio.base_events.Server | None = None
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True, name="connect-spy")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]

    @property
    def url(self) -> str:
        return f"pulsar://127.0.0.1:{self.port}"

    def tokens(self) -> set[str | None]:
        with self._lock:
            return {c.token for c in self.connects}

    def start(self) -> ConnectSpy:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._listen(), self._loop).result(10)
        return self

    def stop(self) -> None:
        async def close() -> None:
            if self._server is not None:
                self._server.close()
        asyncio.run_coroutine_threadsafe(close(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    async def _listen(self) -> None:
        self._server = await asyncio.start_server(self._client, "127.0.0.1", self.port)

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.close()
            return
        try:
            head = await reader.readexactly(4)
            (size,) = struct.unpack(">I", head)
            frame = head + await reader.readexactly(size)
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()
            up_writer.close()
            return
        connect = parse_connect(frame)
        if connect is not None:
            with self._lock:
                self.connects.append(connect)
        up_writer.write(frame)
        await asyncio.gather(self._pipe(reader, up_writer), self._pipe(up_reader, writer))

    @staticmethod
    async def _pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
        try:
            while data := await src.read(65536):
                dst.write(data)
                await dst.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            dst.close()
