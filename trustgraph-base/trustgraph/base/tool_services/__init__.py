"""Tool services: the service base class, the client, and how services announce and are found.

* :mod:`.dynamic_tool_service` (``DynamicToolService``): the class a service
  author subclasses (its descriptor and declared tools are checked with the
  one descriptor model, :mod:`trustgraph.base.descriptors`);
* :mod:`.tool_service_client` (``ToolServiceClient``): the agent's side of a
  call;
* :mod:`.announcer` (a service's heartbeats), :mod:`.service_directory` (who
  is announced and alive; its records and ownership rule in
  :mod:`.service_state`, its caps in :mod:`.directory_limits`),
  :mod:`.service_lookup` (find a service by id),
  :mod:`.catalog_feed` (config plus announcements, rebuilt into the catalog).
"""
