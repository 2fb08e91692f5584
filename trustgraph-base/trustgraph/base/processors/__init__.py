"""Processor base classes and how a processor follows the config.

* :mod:`.async_processor` (``AsyncProcessor``): broker, serving, metrics
  server, lifecycle; :mod:`.flags` (the common flags, the broker token),
  :mod:`.broker_choice` (which broker when none is given: the running
  stack's) and :mod:`.config_follower` (``ConfigFollower``: the config fetch
  and pushes);
* :mod:`.flow_processor` (``FlowProcessor`` and its specs): a processor whose
  consumers and producers are opened per flow;
* :mod:`.config_source` (is this push from config-svc?) and
  :mod:`.config_parts` (config too large for one message, read and written in
  parts).
"""
