"""What rendering one request's templates may cost: CPU time, output length, and what it builds.

Jinja's sandbox stops a template from reaching what it must not touch, but
not from working forever: ``{% for i in range(10000) %}{% for j in
range(10000) %}...`` is 10^8 iterations (the sandbox caps each ``range`` at
100,000, not their product), ``{{ "x" * 10**10 }}`` asks for 10 GB, and
``{{ (10**4096)**4096 % 7 }}`` is one multiplication of numbers of 55 million
bits, 14 s of C with the GIL held, where no trace function runs.  A template
is config, and config may come from anyone who can reach the gateway, so
every render runs within a :class:`RenderBudget`:

* CPU time of the rendering thread (:data:`CPU_SECONDS`), checked by a trace
  function every :data:`CHECK_EVERY` traced events (every call, and every
  line of the template's own code), so a loop that outputs nothing is
  stopped too, and again at every operator and every call of a filter or
  method, where one step may cost much; it is CPU time, not wall time, so a
  loaded machine does not fail a template that would have finished;
* output length (:data:`MAX_CHARS`), counted as the template produces it;
* operations whose result alone would be over the budget are refused before
  they run (:func:`check_binop`): ``*`` and ``+`` building text or lists of
  more than :data:`MAX_CHARS` items, integers (``*``, ``**``, ``+``...) of
  more than :data:`MAX_INT_BITS` bits, ``%`` formatting and padding widths
  (``center``/``indent``/``ljust``...) over :data:`MAX_CHARS`, and printing a
  container whose text could not fit (:func:`check_printed`);
* what the operations and calls build, all together (:data:`MAX_BUILT`
  items), so many values each within bounds cannot fill the memory either.

Over budget is :class:`BudgetExceeded`, which the service answers as an
``llm-error`` naming the template.  The service renders in a worker process
(``worker.py``), where the kernel also bounds what a step this module does
not foresee may cost, and its own event loop never waits on a render.

Compiling a template evaluates what Jinja can fold into a constant (a
filter of literals: ``{{ ([1]|slice(30000000))|list|length }}`` took 14-25 s
and 2 GB), so a template is compiled within a budget of the same size, of
its own (``sandbox.compiling``), on first use, in the worker that renders it.
"""

from __future__ import annotations

import re
import string
import sys
import threading
import time
from types import FrameType
from typing import Any

CPU_SECONDS = 1.0
MAX_CHARS = 4 * 1024 * 1024
CHECK_EVERY = 1024
#: The largest exponent ``**`` may take on integers: 10**4096 is already a 4,097-digit number.
MAX_EXPONENT = 4096
#: The largest integer an operation may build, in bits (about 19,700 decimal digits; Python
#: prints at most 4,300): any operation on integers this size takes microseconds.
MAX_INT_BITS = 1 << 16
#: Items (characters, list entries) the operations and calls of one render may build in all.
MAX_BUILT = 4 * MAX_CHARS

_local = threading.local()
# printf-style widths and precisions: "%99999999d", "%.99999999f".
_PRINTF_SIZE = re.compile(r"%[-+ #0]*(\d*)(?:\.(\d+))?")
#: The file name Jinja gives the code it compiles a template to.
_TEMPLATE_CODE = "<template>"


class BudgetExceeded(Exception):
    """Rendering went over its budget; the message says which part."""


class RenderBudget:
    """One request's allowance, spent by every template it renders (in the thread that renders).

    ``with budget:`` traces the current thread until the block ends; use it
    in the thread that renders, never on the event loop's own thread.
    """

    def __init__(self, cpu_seconds: float = CPU_SECONDS, max_chars: int = MAX_CHARS,
                 max_built: int = MAX_BUILT, doing: str = "rendering") -> None:
        self.cpu_seconds = cpu_seconds
        self.max_chars = max_chars
        self.max_built = max_built
        self.doing = doing
        #: Why it went over, once it has: Jinja takes any error of a constant it folds while it
        #: compiles for "not a constant", so a compile looks here after (sandbox.compiling).
        self.over: str | None = None
        self.chars = 0
        self.built = 0
        self._events = 0
        self._started = 0.0
        self._previous: Any = None
        self._outer: RenderBudget | None = None

    def __enter__(self) -> RenderBudget:
        self._started = time.thread_time()
        self._previous = sys.gettrace()
        self._outer = getattr(_local, "budget", None)
        _local.budget = self
        sys.settrace(self._trace)
        return self

    def __exit__(self, *exc: object) -> None:
        sys.settrace(self._previous)
        _local.budget = self._outer

    def _exceeded(self, why: str) -> BudgetExceeded:
        self.over = why
        return BudgetExceeded(why)

    def check_time(self) -> None:
        """Raise once the render has used more than its CPU time."""
        if time.thread_time() - self._started > self.cpu_seconds:
            raise self._exceeded(f"{self.doing} took more than {self.cpu_seconds:g}s of CPU time")

    def spend(self, value: Any) -> None:
        """Count a value an operation or call built against :data:`MAX_BUILT`."""
        if isinstance(value, str | list | tuple | dict | set | frozenset | bytes):
            self.built += len(value)
            if self.built > self.max_built:
                raise self._exceeded(f"the values it built are over {self.max_built:,} items in all")

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
        if self._events % CHECK_EVERY == 0:
            # Raised here, it surfaces in the traced frame and ends the render.
            self.check_time()

    def output(self, chunk: str) -> None:
        """Count ``chunk`` of output against the length limit."""
        self.chars += len(chunk)
        if self.chars > self.max_chars:
            raise self._exceeded(f"the rendered text is over {self.max_chars:,} characters")


def current() -> RenderBudget | None:
    """The budget of the render running in this thread, if any."""
    return getattr(_local, "budget", None)


def before_step() -> None:
    """Called before every operator and every call of a filter or method: one step may cost much."""
    allowance = current()
    if allowance is not None:
        allowance.check_time()


def after_step(value: Any) -> None:
    """Called with what an operator or call built."""
    allowance = current()
    if allowance is not None:
        allowance.spend(value)


def _bits(n: int) -> int:
    return n.bit_length() if isinstance(n, int) and not isinstance(n, bool) else 0


def check_binop(operator: str, left: Any, right: Any) -> None:
    """Refuse ``left <operator> right`` when its result alone would be over the budget."""
    ints = isinstance(left, int) and isinstance(right, int) and not isinstance(left, bool) \
        and not isinstance(right, bool)
    if operator == "*":
        for seq, n in ((left, right), (right, left)):
            if isinstance(seq, str | list | tuple) and isinstance(n, int) and len(seq) * n > MAX_CHARS:
                raise BudgetExceeded(f"{type(seq).__name__} * {n} is over {MAX_CHARS:,} items")
        if ints and _bits(left) + _bits(right) > MAX_INT_BITS:
            raise BudgetExceeded(f"a product of integers over {MAX_INT_BITS:,} bits is over the render budget")
    elif operator == "**":
        if ints and abs(left) > 1 and right > MAX_EXPONENT:
            raise BudgetExceeded(f"an exponent over {MAX_EXPONENT} is over the render budget")
        if ints and abs(left) > 1 and right > 0 and _bits(left) * right > MAX_INT_BITS:
            raise BudgetExceeded(f"a power of over {MAX_INT_BITS:,} bits is over the render budget")
    elif operator == "+":
        if isinstance(left, str | list | tuple) and isinstance(right, str | list | tuple) \
                and len(left) + len(right) > MAX_CHARS:
            raise BudgetExceeded(f"{type(left).__name__} + {type(right).__name__} is over {MAX_CHARS:,} items")
        if ints and max(_bits(left), _bits(right)) > MAX_INT_BITS:
            raise BudgetExceeded(f"a sum of integers over {MAX_INT_BITS:,} bits is over the render budget")
    elif operator == "%" and isinstance(left, str):
        check_printf(left, right)
    elif ints and max(_bits(left), _bits(right)) > MAX_INT_BITS:   # -, /, //, % on integers
        raise BudgetExceeded(f"an integer over {MAX_INT_BITS:,} bits is over the render budget")


def check_printf(fmt: Any, args: Any) -> None:
    """``fmt % args`` (and the ``format`` filter): a width or precision over the output limit
    would build it at once."""
    if not isinstance(fmt, str):
        return
    for width, precision in _PRINTF_SIZE.findall(fmt):
        for size in (width, precision):
            if size and int(size) > MAX_CHARS:
                raise BudgetExceeded(f"a format width of {int(size):,} characters is over {MAX_CHARS:,}")
    if "*" in fmt:
        for arg in args if isinstance(args, tuple) else (args,):
            if isinstance(arg, int) and abs(arg) > MAX_CHARS:
                raise BudgetExceeded(f"a format width of {arg:,} characters is over {MAX_CHARS:,}")


def check_format(fmt: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """``fmt.format(...)``: a field width or precision over the output limit (``{:>999999999}``,
    or one taken from an argument, ``{:{}}``) would build it at once."""
    if not isinstance(fmt, str):
        return
    try:
        fields = list(string.Formatter().parse(fmt))
    except ValueError:
        return   # format() itself will say what is wrong
    for _literal, _name, spec, _conversion in fields:
        for size in re.findall(r"\d+", spec or ""):
            if int(size) > MAX_CHARS:
                raise BudgetExceeded(f"a format width of {int(size):,} characters is over {MAX_CHARS:,}")
        if spec and "{" in spec:
            for arg in (*args, *kwargs.values()):
                if isinstance(arg, int) and abs(arg) > MAX_CHARS:
                    raise BudgetExceeded(f"a format width of {arg:,} characters is over {MAX_CHARS:,}")


def check_printed(value: Any) -> Any:
    """Refuse printing a container whose text alone would be over the output limit (before it is
    made: ``str`` of a 4-million-item list takes seconds of C); the ``finalize`` of every output."""
    if isinstance(value, list | tuple | set | frozenset | dict) and len(value) * 3 > MAX_CHARS:
        raise BudgetExceeded(f"printing a {type(value).__name__} of {len(value):,} items is over "
                             f"{MAX_CHARS:,} characters")
    return value


def check_width(what: str, width: Any) -> None:
    """Refuse padding to a width over the output limit (``center``, ``indent``, ``ljust``...)."""
    if isinstance(width, int) and width > MAX_CHARS:
        raise BudgetExceeded(f"{what} to {width:,} characters is over {MAX_CHARS:,}")
