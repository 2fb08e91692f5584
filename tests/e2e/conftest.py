"""A whole stack started by the real ``tg-launch`` command (``support.Stack``), shared by a test module."""

from __future__ import annotations

import pytest
from support import Stack


@pytest.fixture(scope="module")
def stack_factory(tmp_path_factory):
    stacks: list[Stack] = []

    def make(*extra: str, env: dict[str, str] | None = None) -> Stack:
        s = Stack(tmp_path_factory.mktemp("stack") / "data", list(extra), env)
        s.start()
        stacks.append(s)
        return s

    yield make
    for s in stacks:
        s.stop()
