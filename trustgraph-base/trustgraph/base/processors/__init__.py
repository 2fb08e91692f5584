"""Processor base classes and how a processor follows the config.

* :mod:`.async_processor` (``AsyncProcessor``): flags, broker, config fetch and
  pushes, metrics server, lifecycle;
* :mod:`.flow_processor` (``FlowProcessor`` and its specs): a processor whose
  consumers and producers are opened per flow;
* :mod:`.config_source` (is this push from config-svc?) and
  :mod:`.config_parts` (config too large for one message, read and written in
  parts).
"""
