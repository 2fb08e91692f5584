"""Upstream 2.1.4's ``trustgraph.base.cassandra_config``: where a processor's Cassandra is, from flags and env.

Upstream's Cassandra-backed processors (config-svc, kg-store, the triples and
rows stores and queries) all take the same four flags and fall back on the
same environment variables, through these functions; a deployment sets
``CASSANDRA_HOST`` &c. once for all of them.  Same flags, variables, defaults
and precedence as upstream: an explicit value, then the flag, then the
environment, then ``cassandra`` as host (and a service's own keyspace last).
The password's value never appears in ``--help``.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from typing import Any

#: Host when neither a flag nor ``CASSANDRA_HOST`` names one (the compose service's name).
DEFAULT_HOST = "cassandra"

#: Setting -> the environment variable that gives its default.
ENV = {"host": "CASSANDRA_HOST", "username": "CASSANDRA_USERNAME", "password": "CASSANDRA_PASSWORD",
       "keyspace": "CASSANDRA_KEYSPACE"}

CassandraConfig = tuple[list[str], str | None, str | None, str | None]


def get_cassandra_defaults() -> dict[str, str | None]:
    """``host``, ``username``, ``password``, ``keyspace`` from the environment (read now, not at import)."""
    defaults: dict[str, str | None] = {key: os.getenv(var) for key, var in ENV.items()}
    defaults["host"] = os.getenv(ENV["host"], DEFAULT_HOST)
    return defaults


def _from_env(setting: str) -> str:
    return f" [from {ENV[setting]}]" if ENV[setting] in os.environ else ""


def add_cassandra_args(parser: argparse.ArgumentParser) -> None:
    """``--cassandra-host``, ``--cassandra-username``, ``--cassandra-password``, ``--cassandra-keyspace``.

    Their defaults come from the environment, and the help says so (``[from
    CASSANDRA_HOST]``) so that an operator reading ``--help`` in a container
    sees where a value came from; a password shows as ``<set>``.
    """
    defaults = get_cassandra_defaults()
    host_help = f"Cassandra host list, comma-separated (default: {defaults['host']}){_from_env('host')}"
    username_help = "Cassandra username"
    if defaults["username"]:
        username_help += f" (default: {defaults['username']}){_from_env('username')}"
    password_help = "Cassandra password"
    if defaults["password"]:
        password_help += f" (default: <set>){_from_env('password')}"
    keyspace_help = "Cassandra keyspace (default: service-specific)"
    if defaults["keyspace"]:
        keyspace_help = f"Cassandra keyspace (default: {defaults['keyspace']}){_from_env('keyspace')}"
    parser.add_argument("--cassandra-host", default=defaults["host"], help=host_help)
    parser.add_argument("--cassandra-username", default=defaults["username"], help=username_help)
    parser.add_argument("--cassandra-password", default=defaults["password"], help=password_help)
    parser.add_argument("--cassandra-keyspace", default=defaults["keyspace"], help=keyspace_help)


def resolve_cassandra_config(args: Any = None, host: str | list[str] | None = None, username: str | None = None,
                             password: str | None = None, default_keyspace: str | None = None) -> CassandraConfig:
    """``(hosts, username, password, keyspace)`` for the driver, the first value found of each.

    Explicit arguments win over ``args`` (an argparse namespace, or any object
    with ``cassandra_*`` attributes), which win over the environment; an empty
    value counts as not given.  ``host`` may be a comma-separated string (split,
    blanks dropped) or already a list.  The keyspace comes from ``args``, then
    ``CASSANDRA_KEYSPACE``, then ``default_keyspace`` (the service's own).
    """
    keyspace = None
    if args is not None:
        host = host or getattr(args, "cassandra_host", None)
        username = username or getattr(args, "cassandra_username", None)
        password = password or getattr(args, "cassandra_password", None)
        keyspace = getattr(args, "cassandra_keyspace", None)
    defaults = get_cassandra_defaults()
    host = host or defaults["host"]
    hosts = [h.strip() for h in host.split(",") if h.strip()] if isinstance(host, str) else host
    return (hosts, username or defaults["username"], password or defaults["password"],
            keyspace or defaults["keyspace"] or default_keyspace)


def get_cassandra_config_from_params(params: Mapping[str, Any],
                                     default_keyspace: str | None = None) -> CassandraConfig:
    """:func:`resolve_cassandra_config` from a processor's parameters (``cassandra_host`` &c.).

    Only the ``cassandra_*`` names count (upstream dropped the older
    ``graph_host``/``cassandra_user``); the keyspace is the environment's or
    ``default_keyspace``, as upstream (a ``cassandra_keyspace`` parameter is not read here).
    """
    return resolve_cassandra_config(host=params.get("cassandra_host"), username=params.get("cassandra_username"),
                                    password=params.get("cassandra_password"), default_keyspace=default_keyspace)


__all__ = ["add_cassandra_args", "get_cassandra_config_from_params", "get_cassandra_defaults",
           "resolve_cassandra_config"]
