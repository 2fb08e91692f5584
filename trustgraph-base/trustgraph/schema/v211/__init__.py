"""Upstream TrustGraph 2.11's wire records where they differ from 2.1's (the agent's and the prompt service's)."""

from .agent import AgentRequest, AgentResponse, AgentStep, PlanStep
from .prompt import PromptResponse

__all__ = ["AgentRequest", "AgentResponse", "AgentStep", "PlanStep", "PromptResponse"]
