"""Agents: ``react`` is the ReAct agent manager (command ``agent-manager-react``)."""
