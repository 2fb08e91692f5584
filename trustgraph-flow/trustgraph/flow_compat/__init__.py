"""Compatibility with upstream TrustGraph's trustgraph-flow, in one place: what our own code never imports.

The flow side of :mod:`trustgraph.compat` (which is trustgraph-base's and
cannot be shared: ``trustgraph`` is a namespace package split over our three
distributions, and a second ``trustgraph/compat/__init__.py`` here would
shadow base's or be shadowed by it, depending on the install order).  Code
written against upstream 2.1.4's agent and prompt modules keeps working with
our trustgraph-flow installed:

* :mod:`.v214`: upstream 2.1.4's ``trustgraph.agent.react.types`` (``Tool``,
  ``Argument``, ``Action`` with ``observation``, ``Final`` with ``final``),
  the ``trustgraph.agent.react.tools`` ``*Impl`` classes,
  ``trustgraph.agent.tool_filter`` and ``trustgraph.template.prompt_manager``,
  each built on ours (the catalog's tool implementations, the agent's tool
  filter, the prompt service's templates).
* :mod:`.v211`: upstream 2.11's wire for our processors (``--wire 2.11``):
  the strategies :class:`trustgraph.compat.v211.wire.Wire211` names as its
  components, loaded by the processor's wire object.

Nothing of ours imports it but the hooks that serve upstream's paths (a test
keeps it so): ``trustgraph/agent/__init__.py`` and
``trustgraph/agent/react/__init__.py`` (one overlay directory each on the
package's path) and ``trustgraph/template/`` (upstream's package, only its
path files); :mod:`.v211` is reached only through a wire object.
"""
