"""tg-launch: the whole stack from one command."""

from .launcher import run

__all__ = ["run"]
