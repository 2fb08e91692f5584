"""``trustgraph.base.cassandra_config``: upstream 2.1.4's Cassandra flags and settings
(:mod:`trustgraph.compat.v214.cassandra_config`)."""

from trustgraph.compat.v214.cassandra_config import (
    add_cassandra_args,
    get_cassandra_config_from_params,
    get_cassandra_defaults,
    resolve_cassandra_config,
)

__all__ = ["add_cassandra_args", "get_cassandra_config_from_params", "get_cassandra_defaults",
           "resolve_cassandra_config"]
