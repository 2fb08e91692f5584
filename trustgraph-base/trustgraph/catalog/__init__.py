"""The tool catalog: what a tool is, in one place.

* ``models``: the descriptor family (every tool type, ``tool-service``, ``mcp``);
* ``arguments``: a tool's arguments, their JSON Schema and the check of a call;
* ``build``: :func:`build_catalog`, the one function that turns config into tools;
* ``contents``: what a built catalog holds (:class:`Catalog`, :class:`CatalogTool`, :class:`BrokenTool`);
* ``parsing``, ``reserved_topics``, ``announced``: the build's parts (reading items, the framework's
  topics no service may use, the services that announce themselves);
* ``check``: :func:`check_item`, the check ``tg-put-config-item`` runs before writing;
* ``data_blocks``: the tools' providers' text shown to a model as data (the ``<tool-data>`` tags);
* ``errors``: :class:`DescriptorError`, the one wording of every problem;
* ``implementations``: how each tool type is called (``BUILDERS``);
* ``calling``: :func:`~.calling.call_tool`, the one path every caller (agent, MCP server,
  gateway) takes to call a tool: checking, time, streaming, one outcome per ending.

``implementations`` and ``calling`` are not imported here: they bring the messaging core,
which the commands that only read descriptors do not need.
"""

from .arguments import TYPES, ArgumentError, ToolArgument, arguments_schema
from .build import CATALOG_TYPES, DESCRIPTOR_TYPES, BrokenTool, Catalog, CatalogTool, build_catalog
from .check import ItemCheck, check_item
from .errors import JSON_FIELD, DescriptorError
from .models import (
    TOOL_SERVICE_TYPE,
    TOOL_TYPES,
    ConfigParam,
    McpServer,
    ToolDescriptor,
    ToolServiceDescriptor,
)

__all__ = [
    "CATALOG_TYPES",
    "DESCRIPTOR_TYPES",
    "JSON_FIELD",
    "TOOL_SERVICE_TYPE",
    "TOOL_TYPES",
    "TYPES",
    "ArgumentError",
    "BrokenTool",
    "Catalog",
    "CatalogTool",
    "ConfigParam",
    "DescriptorError",
    "ItemCheck",
    "McpServer",
    "ToolArgument",
    "ToolDescriptor",
    "ToolServiceDescriptor",
    "arguments_schema",
    "build_catalog",
    "check_item",
]
