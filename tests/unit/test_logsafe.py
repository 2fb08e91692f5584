"""Log lines a request cannot forge or flood, and that never show a secret (trustgraph.base.safety.logsafe)."""

from __future__ import annotations

import io
import logging

import pytest
from trustgraph.base.safety import logsafe, secrets


@pytest.fixture
def log():
    """A logger through the processors' handler, and what it wrote."""
    root = logging.getLogger()
    saved = (list(root.handlers), root.level)
    out = io.StringIO()
    logsafe.configure("DEBUG", "%(levelname)s %(message)s", out, secret_values=["s3cret-value"])
    yield logging.getLogger("test.logsafe"), out
    for h in list(root.handlers):
        root.removeHandler(h)
    for h in saved[0]:
        root.addHandler(h)
    root.setLevel(saved[1])
    secrets._remembered.clear()


def lines(out: io.StringIO) -> list[str]:
    return out.getvalue().splitlines()


def test_a_newline_in_an_id_cannot_start_a_log_line(log):
    logger, out = log
    logger.warning("Dropped malformed message on %s (id=%s): %s", "t", "x\n2026-01-01 INFO forged", "bad")
    logger.warning("carriage %s", "a\rb\x00c\u2028d")
    assert lines(out) == ["WARNING Dropped malformed message on t (id=x\\n2026-01-01 INFO forged): bad",
                          "WARNING carriage a\\rb\\x00c\\u2028d"]


def test_a_huge_argument_is_cut_and_says_how_much(log):
    logger, out = log
    logger.info("Request %s failed", "A" * 1_000_000)
    logger.debug("Prompt %s", "B" * 10_000)
    info, debug = lines(out)
    assert info == f"INFO Request {'A' * logsafe.MAX_ARG}...({1_000_000 - logsafe.MAX_ARG:,} more characters) failed"
    assert debug.startswith("DEBUG Prompt " + "B" * logsafe.MAX_DEBUG_ARG + "...(")


def test_a_huge_message_without_arguments_is_cut_too(log):
    logger, out = log
    logger.info("x" * 100_000)
    (line,) = lines(out)
    assert len(line) < logsafe.MAX_MESSAGE + 100 and line.endswith("more characters)")


def test_formats_still_work(log):
    logger, out = log
    logger.info("%d items in %.1fs, %r", 3, 0.25, [1, "a"])
    logger.info("mapping %(a)s", {"a": "b\nc"})
    logger.info("bad format %d", "not a number")
    assert lines(out) == ["INFO 3 items in 0.2s, [1, 'a']", "INFO mapping b\\nc",
                          "INFO bad format %d (arguments: 'not a number')"]


def test_exception_text_is_indented_so_it_cannot_pose_as_a_record(log):
    logger, out = log
    try:
        raise ValueError("bad\n2026-01-01 INFO forged s3cret-value")
    except ValueError:
        logger.exception("Request %s failed", "r1")
    first, *rest = lines(out)
    assert first == "ERROR Request r1 failed"
    assert rest and all(line.startswith("  ") for line in rest)
    assert "s3cret-value" not in out.getvalue() and "forged ***" in out.getvalue()


def test_credentials_are_masked(log):
    logger, out = log
    logger.info("OpenAI-compatible server %s", "https://bob:pa55word@llm.example/v1?api_key=k123&x=1")
    logger.info("token %s in the text", "s3cret-value")
    logger.info("websocket ws://h/api/v1/socket?token=abc%20def refused")
    assert lines(out) == ["INFO OpenAI-compatible server https://bob:***@llm.example/v1?api_key=***&x=1",
                          "INFO token *** in the text", "INFO websocket ws://h/api/v1/socket?token=*** refused"]


def test_a_secret_across_the_cut_is_masked_before_it_is_cut(log):
    logger, out = log
    logger.info("%s", "x" * (logsafe.MAX_ARG - 3) + "s3cret-value")
    assert "s3c" not in out.getvalue()


def test_shown_is_escaped_and_clipped():
    assert logsafe.shown("a\nb") == "a\\nb"
    assert logsafe.shown("y" * 300, 10) == "yyyyyyyyyy...(290 more characters)"
    assert logsafe.shown(42) == "42"
