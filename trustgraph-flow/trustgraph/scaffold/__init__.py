"""Scaffolding for contributors: ``tg-new-tool-service`` (:mod:`.new_tool_service`)."""

from .new_tool_service import run

__all__ = ["run"]
