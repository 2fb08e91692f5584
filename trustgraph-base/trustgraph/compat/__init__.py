"""Compatibility with upstream TrustGraph, in one place: what our own code never imports.

A deployment swaps our packages in for upstream's without changing its own
code, so upstream's names and module paths must keep working; a reader of our
own code should meet none of that.  Everything upstream-shaped lives here:

* :mod:`.v214`: upstream 2.1.4's processor-author API (``trustgraph.base``'s
  ``LlmService``, the flow client specs, the store and query service bases,
  ...), each built on our messaging core, and the files that make upstream's
  module paths under ``trustgraph.base`` importable (``v214/base-paths``, an
  overlay on that package's ``__path__``).
* :mod:`.v211`: upstream 2.11's wire (``--wire 2.11``): its records and queue
  names, and the 2.11 :class:`~trustgraph.base.wire.Wire` that
  :func:`trustgraph.base.wire.wire_for` loads by name.

Nothing outside this package imports it but ``trustgraph.base``'s two hooks and
``trustgraph.base.wire``'s loader (a test keeps it so).
"""
