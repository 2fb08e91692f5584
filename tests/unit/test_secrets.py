"""What counts as a secret, and how it is compared and kept out of text (trustgraph.base.secrets)."""

from __future__ import annotations

import pytest
from trustgraph.base import secrets


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
