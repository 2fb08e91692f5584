"""The fixtures of the gateway tests (``gateway_stack``) and mcp-server's (``mcp_server_harness``), for every
integration module that asks for them.

A module that wants a stack of its own defines its own ``stack`` fixture, which wins over this one.
"""

from gateway_stack import http, pubsub, stack  # noqa: F401 - fixtures
from mcp_server_harness import mcp_server  # noqa: F401 - a fixture
