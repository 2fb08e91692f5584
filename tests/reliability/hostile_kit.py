"""What the hostile-input scenarios send, and how they watch the stack while they do.

* :func:`bus_cases`: at least 50 malformed messages for one request topic,
  derived from one good request (raw bytes, wrong JSON types in every field,
  missing and unknown fields, huge and deeply nested values, bad JSON inside
  JSON-string fields, bad ids and properties), each saying whether a reply is
  owed (an id was given and the caller's deadline has not passed);
* :func:`body_cases`: the same idea for a REST body;
* :class:`RawBus`: a bare pulsar-client, so a payload goes on the bus exactly
  as written (the framework's producers would refuse most of them), and the
  ids of the replies on a response topic are collected;
* :func:`components` and :func:`rss_mb`: the launched stack's processes by
  component name, and their memory.
"""

from __future__ import annotations

import json
import os
import random
import threading
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
import pulsar

# What a field may be given instead of what its schema says.
FORGED_VALUE = "2026-01-01 00:00:00,000 INFO forged: this line was written by a request"
DEEP = 990  # decodes in Python (just), breaks whatever recurses after it
DEEPER = 5_000  # does not decode at all


def deep(levels: int) -> str:
    return "[" * levels + "]" * levels


def _wrong_values() -> list[tuple[str, str]]:
    """(label, JSON text): texts, since a value nested 990 deep cannot be built or dumped here."""
    values: list[tuple[str, Any]] = [
        ("int", 1),
        ("float", -1.5),
        ("bool", True),
        ("text", "text"),
        ("list", [1, "a"]),
        ("object", {"k": {"j": 1}}),
        ("null", None),
        ("empty-list", []),
        ("empty-object", {}),
        ("huge-text", "x" * 1_000_000),
        ("control-text", "\u0000\u001b[31m\ud7ff"),
    ]
    return [(label, json.dumps(v)) for label, v in values] + [
        ("nested-150", deep(150)),
        ("nested-990", deep(DEEP)),
    ]


_HOLE = "\u0000hole\u0000"


def with_field(good: dict[str, Any], name: str, value_text: str) -> str:
    """``good`` as JSON text with field ``name`` set to the JSON text ``value_text``."""
    return json.dumps({**good, name: _HOLE}).replace(json.dumps(_HOLE), value_text, 1)


_BAD_JSON_TEXTS = [
    ("json-open", "{"),
    ("json-list", "[1, 2]"),
    ("json-deep", deep(DEEPER)),
    ("json-number", "1" * 5000),
    ("json-null", "null"),
    ("json-garbage", "\x00not json"),
]


@dataclass
class Case:
    label: str
    payload: bytes
    props: dict[str, str] = field(default_factory=dict)
    expect_reply: bool = True

    @property
    def rid(self) -> str | None:
        return self.props.get("id")


def bus_cases(
    prefix: str,
    good: dict[str, Any],
    fields: Iterable[str],
    json_fields: Iterable[str] = (),
    extra_props: dict[str, str] | None = None,
) -> list[Case]:
    """Malformed messages for one topic; ``fields`` are the record's fields, ``json_fields``
    those that hold JSON text (a map of them when the good value is a dict)."""
    rng = random.Random(prefix)  # the same bytes every run
    cases: list[Case] = []

    def add(
        label: str, payload: bytes | str | dict, props: dict[str, str] | None = None, expect: bool = True
    ) -> None:
        n = len(cases)
        data = (
            payload
            if isinstance(payload, bytes)
            else (
                payload.encode("utf-8", "surrogatepass")
                if isinstance(payload, str)
                else json.dumps(payload).encode("utf-8", "surrogatepass")
            )
        )
        cases.append(
            Case(f"{prefix}/{label}", data, props if props is not None else {"id": f"{prefix}-{n}"}, expect)
        )

    good_text = json.dumps(good)
    for label, raw in [
        ("empty", b""),
        ("binary", b"\x00\xff\xfe\xfd"),
        ("random", rng.randbytes(64)),
        ("not-json", b"not json"),
        ("open-brace", b"{"),
        ("list", b"[]"),
        ("null", b"null"),
        ("number", b"42"),
        ("string", b'"s"'),
        ("true", b"true"),
        ("nan", b"NaN"),
        ("utf16", good_text.encode("utf-16")),
        ("bom", b"\xef\xbb\xbf" + good_text.encode()),
        ("deep-open", b"[" * DEEPER),
        ("deep-top", deep(DEEPER).encode()),
        ("deep-field", ('{"x": ' + deep(DEEP) + "}").encode()),
        ("long-number", b'{"x": ' + b"9" * 5000 + b"}"),
        ("big-text", json.dumps({**good, "x": "y" * 4_500_000}).encode()),
    ]:
        add(label, raw)
    for name in fields:
        for label, text in _wrong_values():
            add(f"{name}={label}", with_field(good, name, text))
        add(f"missing-{name}", {k: v for k, v in good.items() if k != name})
    for name in json_fields:
        for label, text in _BAD_JSON_TEXTS:
            value = {"t": text} if isinstance(good.get(name), dict) else text
            add(f"{name}:{label}", {**good, name: value})
    add("unknown-fields", {**good, "surprise": 1, "__proto__": {}, "": None})
    add("only-unknown", {"nothing": "known"})
    # Ids and properties.
    n = len(cases)
    add("id-newline", good, {"id": f"{prefix}-{n}\n{FORGED_VALUE}"})
    add("id-megabyte", good, {"id": f"{prefix}-{n + 1}-" + "i" * 1_000_000})
    add("id-empty", good, {"id": ""})
    add("id-unicode", good, {"id": f"{prefix}-{n + 3}-\u202e\u0007é"})
    add("no-id", good, {}, expect=False)
    add("no-id-garbage", b"\x00", {}, expect=False)
    add("deadline-garbage", good, {"id": f"{prefix}-{n + 6}", "deadline": "soon"})
    add("deadline-infinite", good, {"id": f"{prefix}-{n + 7}", "deadline": "1e400"})
    add(
        "deadline-passed",
        good,
        {"id": f"{prefix}-{n + 8}", "deadline": f"{time.time() - 60:.3f}"},
        expect=False,
    )
    for key, value in (extra_props or {}).items():
        add(f"prop-{key}", good, {"id": f"{prefix}-{len(cases)}", key: value})
    return cases


def body_cases(good: dict[str, Any], fields: Iterable[str] = ()) -> list[tuple[str, bytes]]:
    """Malformed REST bodies derived from ``good`` (its own fields and ``fields``): (label, body)."""
    names = list(dict.fromkeys([*good, *fields])) or ["x"]
    out = [
        (c.label, c.payload)
        for c in bus_cases("rest", good, names, ())
        if c.props.get("id") is not None
        and not c.label.startswith("rest/id-")
        and not c.label.startswith("rest/deadline")
    ]
    text = json.dumps(good)
    out += [
        ("rest/over-body-limit", b'{"x": "' + b"z" * (32 * 1024 * 1024) + b'"}'),
        ("rest/trailing-garbage", (text + "}").encode()),
        ("rest/two-documents", (text + text).encode()),
        ("rest/latin1", text.encode("latin-1", "replace") + b"\xe9"),
        ("rest/containers", ("[" + ",".join(["{}"] * 1_000_001) + "]").encode()),
    ]
    return out


class Replies:
    """The ids of the messages seen on one topic, as they arrive (pulsar's listener thread)."""

    def __init__(self) -> None:
        self.ids: Counter[str] = Counter()
        self._cond = threading.Condition()
        self.consumer: Any = None

    def close(self) -> None:
        """Stop following the topic.  Subscriptions left open pile up on the one connection,
        and the broker then drops non-persistent messages it cannot write to it at once."""
        if self.consumer is not None:
            self.consumer.unsubscribe()

    def on_message(self, consumer: Any, msg: Any) -> None:
        rid = msg.properties().get("id")
        with self._cond:
            self.ids[rid] += 1
            self._cond.notify_all()
        consumer.acknowledge(msg)

    def wait(self, ids: Iterable[str], timeout: float) -> set[str]:
        """Wait until each of ``ids`` has a reply; the ones still missing at ``timeout``."""
        wanted = set(ids)
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                missing = {i for i in wanted if self.ids[i] == 0}
                left = deadline - time.monotonic()
                if not missing or left <= 0:
                    return missing
                self._cond.wait(min(left, 1.0))


class RawBus:
    """pulsar-client as it is: payload bytes and properties go out exactly as given."""

    def __init__(self, url: str) -> None:
        self.client = pulsar.Client(
            url, logger=pulsar.FileLogger(pulsar.LoggerLevel.Error, os.devnull), operation_timeout_seconds=10
        )
        self._producers: dict[str, Any] = {}

    def replies(self, topic: str) -> Replies:
        replies = Replies()
        replies.consumer = self.client.subscribe(
            topic,
            f"hostile-{os.getpid()}-{time.monotonic_ns()}",
            consumer_type=pulsar.ConsumerType.Shared,
            message_listener=replies.on_message,
        )
        return replies

    def send(self, topic: str, payload: bytes, props: dict[str, str]) -> None:
        producer = self._producers.get(topic)
        if producer is None:
            producer = self._producers[topic] = self.client.create_producer(topic, block_if_queue_full=True)
        producer.send(payload, properties=props)

    def close(self) -> None:
        self.client.close()


def _cmdline(pid: int) -> list[str]:
    try:
        return psutil.Process(pid).cmdline()
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return []


def components(pids: Iterable[int], commands: dict[str, str]) -> dict[str, int]:
    """Component name -> pid among ``pids``, by the console script (``commands``: script -> name)."""
    found: dict[str, int] = {}
    for pid in pids:
        argv = _cmdline(pid)
        for arg in argv[:2]:
            name = commands.get(Path(arg).name) or ("broker" if Path(arg).name == "pulsar-lite" else None)
            if name:
                found[name] = pid
                break
    return found


def rss_mb(pid: int) -> float:
    """Resident memory of ``pid`` in MB (0 when it is gone)."""
    try:
        return psutil.Process(pid).memory_info().rss / 2**20
    except psutil.NoSuchProcess:
        return 0.0
