"""What counts as a secret, and how it is compared and kept out of text (trustgraph.base.safety.secrets)."""

from __future__ import annotations

import pytest
from trustgraph.base.safety import secrets


@pytest.fixture(autouse=True)
def _forget():
    yield
    secrets._remembered.clear()


@pytest.mark.parametrize("given", ["s3cret ", " s3cret", "s3cret\n", "S3CRET", "s3cre", "s3crett", "", None])
def test_tokens_match_exactly(given):
    assert secrets.tokens_match("s3cret", "s3cret")
    assert not secrets.tokens_match(given, "s3cret")


def test_no_token_matches_an_empty_expectation():
    assert not secrets.tokens_match("", "")
    assert not secrets.tokens_match(None, "")


@pytest.mark.parametrize("token, problem", [
    ("ok-token", None), ("tok ", "whitespace"), ("\ttok", "whitespace"), ("to\x01k", "control"),
    ("tök", "non-ASCII")])
def test_token_problem(token, problem):
    found = secrets.token_problem(token)
    assert (found is None) if problem is None else (problem in found)


@pytest.mark.parametrize("text, shown", [
    ("https://user:pw@host/v1", "https://user:***@host/v1"),
    ("https://ghp_abc@host/v1", "https://***@host/v1"),
    ("ws://h:1/api/v1/socket?token=a%20b&x=1", "ws://h:1/api/v1/socket?token=***&x=1"),
    ("http://h/x?api_key=zz&access_token=yy#f", "http://h/x?api_key=***&access_token=***#f"),
    ("http://h/x?author=me&key=k", "http://h/x?author=me&key=***"),
    ("no url here", "no url here"),
])
def test_scrub_masks_url_credentials(text, shown):
    assert secrets.scrub(text) == shown
    assert secrets.redact_url(text) == shown


def test_remembered_values_are_masked_raw_and_quoted():
    secrets.remember("p@ss word", "ab")  # too short to search for: protects nothing anyway
    assert secrets.scrub("x p@ss word y p%40ss%20word ab") == "x *** y *** ab"


def test_secret_params_are_the_flags_that_hold_secrets():
    params = {"api_key": "k", "api_token": "t", "token": "m", "pulsar_api_key": "", "model": "gpt", "url": "u"}
    assert sorted(secrets.secret_values(params)) == ["k", "m", "t"]


def test_child_environment_keeps_only_granted_secrets():
    env = {"PATH": "/bin", "HOME": "/root", "LANG": "C.UTF-8", "OPENAI_TOKEN": "sk", "GATEWAY_SECRET": "g",
           "MCP_SERVER_TOKEN": "m", "AWS_SECRET_ACCESS_KEY": "a", "GITHUB_TOKEN": "gh", "PGPASSWORD": "p",
           "OPENAI_BASE_URL": "http://llm/v1", "HTTPS_PROXY": "http://u:pw@proxy:3128",
           "NO_PROXY": "localhost", "PWD": "/work", "SSH_AUTH_SOCK": "/tmp/agent", "DB_URL": "http://x/"}
    assert secrets.child_environment(env) == {"PATH": "/bin", "HOME": "/root", "LANG": "C.UTF-8",
                                              "NO_PROXY": "localhost", "PWD": "/work", "DB_URL": "http://x/"}
    assert secrets.child_environment(env, ["OPENAI_TOKEN", "OPENAI_BASE_URL", "ABSENT"]) == {
        "PATH": "/bin", "HOME": "/root", "LANG": "C.UTF-8", "NO_PROXY": "localhost", "PWD": "/work",
        "DB_URL": "http://x/", "OPENAI_TOKEN": "sk", "OPENAI_BASE_URL": "http://llm/v1"}


@pytest.mark.parametrize("module, flag, env", [
    ("trustgraph.gateway.service", "--api-token", "GATEWAY_SECRET"),
    ("trustgraph.mcp_server.service", "--token", "MCP_SERVER_TOKEN"),
])
def test_a_token_no_client_could_send_is_refused_at_start_without_showing_it(module, flag, env, monkeypatch,
                                                                              capsys):
    import argparse
    import importlib
    processor = importlib.import_module(module).Processor
    parser = argparse.ArgumentParser(prog="p")
    processor.add_args(parser)
    assert getattr(parser.parse_args([flag, "good-token"]), flag.lstrip("-").replace("-", "_")) == "good-token"
    monkeypatch.setenv(env, "pasted-token\n")
    parser = argparse.ArgumentParser(prog="p")
    processor.add_args(parser)
    with pytest.raises(SystemExit) as e:
        parser.parse_args([])
    err = capsys.readouterr().err
    assert e.value.code == 2 and f"{flag} or {env} cannot be used" in err and "whitespace" in err
    assert "pasted-token" not in err


async def test_the_mcp_server_compares_the_whole_header_exactly():
    from trustgraph.mcp_server.auth import bearer_only
    reached = []

    async def app(scope, receive, send):
        reached.append(scope)

    guarded = bearer_only(app, "m-token")
    statuses = []

    async def send(message):
        if message["type"] == "http.response.start":
            statuses.append(message["status"])

    for header in (b"Bearer m-token", b"Bearer m-token ", b"bearer m-token", b"Bearer  m-token", b"m-token",
                   b"Bearer m-tokenx", b"Basic m-token", b""):
        await guarded({"type": "http", "headers": [(b"authorization", header)]}, None, send)
    assert len(reached) == 1 and statuses == [401] * 7


async def test_the_commands_never_print_the_token():
    import asyncio

    from aiohttp import web
    from trustgraph.api.exceptions import ProtocolException
    from trustgraph.api.websocket import final
    from trustgraph.base.command_line import CliError
    from trustgraph.base.launching.broker import free_port
    from trustgraph.cli.socket import _stream

    async def refuse(_request):
        return web.Response(status=403)

    app = web.Application()
    app.router.add_get("/api/v1/socket", refuse)
    runner = web.AppRunner(app)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    token = "tok/en+with spaces"
    try:
        with pytest.raises(CliError) as cli:
            await _stream(f"http://127.0.0.1:{port}/", token, "agent", {}, "default", lambda r: None, 10)
        with pytest.raises(ProtocolException) as api:
            await asyncio.wait_for(final(f"http://127.0.0.1:{port}/", token, 10, "agent", "default", {}), 10)
    finally:
        await runner.cleanup()
    for text in (str(cli.value), str(api.value)):
        assert "HTTP 403" in text and "token=***" in text, text
        assert "tok" not in text.replace("token=", ""), text


def test_a_command_error_line_masks_the_token(monkeypatch, capsys):
    from trustgraph.base.command_line import fail
    monkeypatch.setenv("TRUSTGRAPH_TOKEN", "env-token-1")
    with pytest.raises(SystemExit):
        fail("tg-x", "reply mentions env-token-1 and https://me:pw@h/ ?token=abc")
    assert capsys.readouterr().err == "tg-x: error: reply mentions *** and https://me:***@h/ ?token=***\n"


async def test_the_mcp_server_takes_either_of_its_tokens_and_nothing_between():
    from trustgraph.mcp_server.auth import bearer_only
    reached = []

    async def app(scope, receive, send):
        reached.append(dict(scope["headers"])[b"authorization"])

    guarded = bearer_only(app, "mcp-token", "gateway-secret")
    statuses = []

    async def send(message):
        if message["type"] == "http.response.start":
            statuses.append(message["status"])

    for header in (b"Bearer mcp-token", b"Bearer gateway-secret", b"Bearer mcp-tokengateway-secret",
                   b"Bearer m", b"Bearer "):
        await guarded({"type": "http", "headers": [(b"authorization", header)]}, None, send)
    assert reached == [b"Bearer mcp-token", b"Bearer gateway-secret"] and statuses == [401] * 3


def test_an_echoed_authorization_header_and_a_bearer_token_are_masked_but_prose_is_not():
    from trustgraph.base.safety.secrets import scrub
    assert scrub("LLM server answered 401: bad Authorization: Basic dXNlcjpwYXNz") == \
        "LLM server answered 401: bad Authorization: Basic ***"
    assert scrub('{"headers": {"authorization": "Bearer sk-abc123"}}') == '{"headers": {"authorization": "Bearer ***"}}'
    assert scrub("AUTHORIZATION=Token abcd1234&x=1") == "AUTHORIZATION=Token ***&x=1"
    assert scrub("then Bearer sk-live-0123456789 was refused") == "then Bearer *** was refused"
    prose = "the Basic idea: a Bearer token is a credential"
    assert scrub(prose) == prose


def test_url_credentials_come_out_of_the_url_unquoted():
    from trustgraph.base.safety.secrets import url_credentials
    assert url_credentials("https://us%40er:p%3Ass@host:8080/v1?x=1") == ("https://host:8080/v1?x=1", "us@er", "p:ss")
    assert url_credentials("http://TOKEN@host/v1") == ("http://host/v1", "TOKEN", None)
    assert url_credentials("http://host/v1") == ("http://host/v1", None, None)
