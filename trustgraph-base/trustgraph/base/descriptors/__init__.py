"""What a descriptor may say: one model of every descriptor, for everyone who reads or writes one.

A tool service checks its own descriptor and declared tools with these
models before it serves; the catalog (``trustgraph.catalog``) reads config
and announcements with them; the commands that write descriptors check with
them.  So each field is written once: its key, type, limits and the words of
its problems.

* :mod:`.models`: the pydantic models (every tool type, ``tool-service``, ``mcp``),
  examples and ``queues_of``;
* :mod:`.annotations`: ``read-only``, ``destructive``, ``idempotent``, ``open-world``, how an
  unknown one reads, the retry rule and MCP's hints (stdlib only);
* :mod:`.arguments`: a tool's arguments, their JSON Schema and the check of a call;
* :mod:`.checks`: :func:`~.checks.check_tool` (one tool descriptor) and
  :func:`~.checks.check_declaration` (a service's own);
* :mod:`.parsing`: reading one descriptor or a config section, and the keys nothing reads;
* :mod:`.reserved_topics`: the framework's topics, which no tool service may use;
* :mod:`.errors`: :class:`~.errors.DescriptorError`, the one wording of every problem.

Nothing is imported here, so :mod:`.annotations` stays light to import.
"""
