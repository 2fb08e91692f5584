"""AsyncProcessor's config dispatch (no broker needed: apply_config is called directly)."""

from __future__ import annotations

import pytest
from trustgraph.base.processors.async_processor import AsyncProcessor


def processor() -> AsyncProcessor:
    return AsyncProcessor(id="p", pulsar_host="pulsar://127.0.0.1:1", metrics=False)


async def test_a_failing_handler_does_not_stop_the_others(caplog):
    p = processor()
    seen: list[str] = []

    async def broken(config, version):
        raise RuntimeError("boom")

    async def fine(config, version):
        seen.append(config["tool"]["a"])

    p.register_config_handler(broken)
    p.register_config_handler(fine)
    await p.apply_config({"tool": {"a": "1"}}, 1)
    assert seen == ["1"]
    assert "boom" in caplog.text and "failed on version 1" in caplog.text


async def test_older_versions_are_ignored_and_types_filter_calls():
    p = processor()
    calls: list[tuple[str, int]] = []

    async def on_tool(config, version):
        calls.append(("tool", version))

    async def on_prompt(config, version):
        calls.append(("prompt", version))

    p.register_config_handler(on_tool, types=["tool"])
    p.register_config_handler(on_prompt, types=["prompt"])
    await p.apply_config({"tool": {"a": "1"}}, 5)
    await p.apply_config({"tool": {"a": "0"}}, 4)                      # older: ignored
    await p.apply_config({"tool": {"a": "1"}, "prompt": {"s": "x"}}, 6)  # only prompt changed
    assert calls == [("tool", 5), ("prompt", 5), ("prompt", 6)]
    assert p.config_version == 6


@pytest.mark.parametrize("flag, value", [("--pulsar-host", "pulsar://h:1"), ("-p", "pulsar://h:2")])
def test_common_flags(flag, value, monkeypatch):
    import argparse
    monkeypatch.delenv("PULSAR_HOST", raising=False)
    parser = argparse.ArgumentParser()
    AsyncProcessor.add_args(parser)
    args = parser.parse_args([flag, value, "--no-metrics", "-P", "9100", "-l", "DEBUG"])
    assert (args.pulsar_host, args.metrics, args.metrics_port, args.log_level) == (value, False, 9100, "DEBUG")
    monkeypatch.setenv("PULSAR_HOST", "pulsar://env:3")
    parser = argparse.ArgumentParser()
    AsyncProcessor.add_args(parser)
    assert parser.parse_args([]).pulsar_host == "pulsar://env:3"


@pytest.mark.parametrize("env, level", [(None, "INFO"), ("debug", "DEBUG"), ("WARNING", "WARNING"), ("loud", "INFO")])
def test_the_log_level_defaults_to_the_environment(env, level, monkeypatch):
    import argparse
    if env is None:
        monkeypatch.delenv("TRUSTGRAPH_LOG_LEVEL", raising=False)
    else:
        monkeypatch.setenv("TRUSTGRAPH_LOG_LEVEL", env)
    parser = argparse.ArgumentParser()
    AsyncProcessor.add_args(parser)
    assert parser.parse_args([]).log_level == level
    assert parser.parse_args(["-l", "ERROR"]).log_level == "ERROR"   # the flag wins


def test_the_wire_defaults_to_2_1_and_the_environment_sets_it(monkeypatch):
    import argparse
    monkeypatch.delenv("TRUSTGRAPH_WIRE", raising=False)
    parser = argparse.ArgumentParser()
    AsyncProcessor.add_args(parser)
    assert parser.parse_args([]).wire == "2.1"
    monkeypatch.setenv("TRUSTGRAPH_WIRE", "2.11")
    parser = argparse.ArgumentParser()
    AsyncProcessor.add_args(parser)
    assert parser.parse_args([]).wire == "2.11"
    assert parser.parse_args(["--wire", "2.1"]).wire == "2.1"
    with pytest.raises(SystemExit):
        parser.parse_args(["--wire", "3.0"])


def test_a_processor_refuses_a_wire_it_does_not_speak():
    from trustgraph.base.processors.async_processor import StartRefused

    assert processor().wire.name == "2.1"
    with pytest.raises(StartRefused) as refused:
        AsyncProcessor(id="p", pulsar_host="pulsar://127.0.0.1:1", metrics=False, wire="2.11")
    assert str(refused.value) == ("p does not speak TrustGraph 2.11's wire (it speaks 2.1): run it with "
                                  "--wire 2.1 (or unset $TRUSTGRAPH_WIRE), or use upstream's p there")

    class Both(AsyncProcessor):
        wires = ("2.1", "2.11")

    assert Both(id="b", pulsar_host="pulsar://127.0.0.1:1", metrics=False, wire="2.11").wire.name == "2.11"
