"""What rendering one request's templates may cost: CPU time and output length.

Jinja's sandbox stops a template from reaching what it must not touch, but
not from working forever: ``{% for i in range(10000) %}{% for j in
range(10000) %}...`` is 10^8 iterations (the sandbox caps each ``range`` at
100,000, not their product), and ``{{ "x" * 10**10 }}`` asks for 10 GB.  A
template is config, and config may come from anyone who can reach the
gateway, so every render runs within a :class:`RenderBudget`:

* CPU time of the rendering thread (:data:`CPU_SECONDS`), checked by a trace
  function every :data:`CHECK_EVERY` traced events (every call, and every
  line of the template's own code), so a loop that outputs nothing is
  stopped too; it is CPU time, not wall time, so a loaded machine does not
  fail a template that would have finished;
* output length (:data:`MAX_CHARS`), counted as the template produces it;
* operations that would build one value over :data:`MAX_CHARS` at once, in C
  where no trace function runs (``*`` on text or lists, ``**`` on numbers,
  ``center``/``indent``/padding widths), are refused before they run.

Over budget is :class:`BudgetExceeded`, which the service answers as an
``llm-error`` naming the template.  The service renders in a worker thread,
so the event loop keeps serving other requests meanwhile.
"""

from __future__ import annotations

import sys
import time
from types import FrameType
from typing import Any

CPU_SECONDS = 1.0
MAX_CHARS = 4 * 1024 * 1024
CHECK_EVERY = 1024
#: The largest exponent ``**`` may take on integers: 10**4096 is already a 4,097-digit number.
MAX_EXPONENT = 4096
#: The file name Jinja gives the code it compiles a template to.
_TEMPLATE_CODE = "<template>"


class BudgetExceeded(Exception):
    """Rendering went over its budget; the message says which part."""


class RenderBudget:
    """One request's allowance, spent by every template it renders (in the thread that renders).

    ``with budget:`` traces the current thread until the block ends; use it
    in the thread that renders, never on the event loop's own thread.
    """

    def __init__(self, cpu_seconds: float = CPU_SECONDS, max_chars: int = MAX_CHARS) -> None:
        self.cpu_seconds = cpu_seconds
        self.max_chars = max_chars
        self.chars = 0
        self._events = 0
        self._started = 0.0
        self._previous: Any = None

    def __enter__(self) -> RenderBudget:
        self._started = time.thread_time()
        self._previous = sys.gettrace()
        sys.settrace(self._trace)
        return self

    def __exit__(self, *exc: object) -> None:
        sys.settrace(self._previous)

    def _trace(self, frame: FrameType, event: str, arg: Any) -> Any:
        # Every call is counted; line events are followed only in template code
        # (where the loops are), which keeps the cost for a real template small.
        self._tick()
        return self._lines if frame.f_code.co_filename == _TEMPLATE_CODE else None

    def _lines(self, frame: FrameType, event: str, arg: Any) -> Any:
        self._tick()
        return self._lines

    def _tick(self) -> None:
        self._events += 1
        if self._events % CHECK_EVERY == 0 and time.thread_time() - self._started > self.cpu_seconds:
            # Raised here, it surfaces in the traced frame and ends the render.
            raise BudgetExceeded(f"rendering took more than {self.cpu_seconds:g}s of CPU time")

    def output(self, chunk: str) -> None:
        """Count ``chunk`` of output against the length limit."""
        self.chars += len(chunk)
        if self.chars > self.max_chars:
            raise BudgetExceeded(f"the rendered text is over {self.max_chars:,} characters")


def check_binop(operator: str, left: Any, right: Any) -> None:
    """Refuse ``left <operator> right`` when its result alone would be over the budget."""
    if operator == "*":
        for seq, n in ((left, right), (right, left)):
            if isinstance(seq, (str, list, tuple)) and isinstance(n, int) and len(seq) * n > MAX_CHARS:
                raise BudgetExceeded(f"{type(seq).__name__} * {n} is over {MAX_CHARS:,} items")
    elif operator == "**":
        if isinstance(left, int) and isinstance(right, int) and abs(left) > 1 and right > MAX_EXPONENT:
            raise BudgetExceeded(f"an exponent over {MAX_EXPONENT} is over the render budget")


def check_width(what: str, width: Any) -> None:
    """Refuse padding to a width over the output limit (``center``, ``indent``, ``ljust``...)."""
    if isinstance(width, int) and width > MAX_CHARS:
        raise BudgetExceeded(f"{what} to {width:,} characters is over {MAX_CHARS:,}")
