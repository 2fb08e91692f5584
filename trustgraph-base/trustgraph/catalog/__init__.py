"""The tool catalog: the tools of a whole config and of the running services, resolved, ranked and called.

What one descriptor may say (the models of every descriptor, argument
schemas, the check of one tool, the one wording of a problem) is
:mod:`trustgraph.base.descriptors`, which a tool service checks its own
declaration with too; its main names are re-exported here.

* ``build``: :func:`build_catalog`, the one function that turns config into tools;
* ``contents``: what a built catalog holds (:class:`Catalog`, :class:`CatalogTool`, :class:`BrokenTool`);
* ``announced``: the services that announce themselves, and which of their tools the build takes;
* ``check``: :func:`check_item`, the check ``tg-put-config-item`` runs before writing;
* ``policy``: ``tool-policy/announced``, whose announced tools are used;
* ``data_blocks``: the tools' providers' text shown to a model as data (the ``<tool-data>`` tags);
* ``ranking``, ``relevance``, ``embedding``, ``sentence_encoder``: the tools a prompt holds, best first;
* ``implementations``: how each tool type is called (``BUILDERS``);
* ``calling``: :func:`~.calling.call_tool`, the one path every caller (agent, MCP server,
  gateway) takes to call a tool: checking, time, streaming, one outcome per ending.

``implementations`` and ``calling`` are not imported here: they bring the messaging core,
which the commands that only read descriptors do not need.
"""

from ..base.descriptors.annotations import Annotations
from ..base.descriptors.arguments import TYPES, ArgumentError, ToolArgument, arguments_schema
from ..base.descriptors.errors import JSON_FIELD, DescriptorError
from ..base.descriptors.models import (
    TOOL_SERVICE_TYPE,
    TOOL_TYPES,
    ConfigParam,
    McpServer,
    ToolDescriptor,
    ToolServiceDescriptor,
)
from .build import CATALOG_TYPES, DESCRIPTOR_TYPES, BrokenTool, Catalog, CatalogTool, build_catalog
from .check import ItemCheck, check_item

__all__ = [
    "CATALOG_TYPES",
    "DESCRIPTOR_TYPES",
    "JSON_FIELD",
    "TOOL_SERVICE_TYPE",
    "TOOL_TYPES",
    "TYPES",
    "Annotations",
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
