"""The Jinja2 sandbox templates render in: lenient or strict about missing variables, refusing
unsafe attributes, and counting every operator, call and filter against the render budget
(budget.py)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial, wraps
from typing import Any

import jinja2
from jinja2.sandbox import SandboxedEnvironment
from jinja2.utils import missing

from . import budget


class _MissingVariable(jinja2.exceptions.UndefinedError):
    """Raised on first use of an undefined value, carrying what was missing."""

    def __init__(self, name: str | None, detail: str) -> None:
        super().__init__(detail)
        self.name = name
        self.detail = detail


class _Strict(jinja2.StrictUndefined):
    """StrictUndefined whose error carries the missing name, for the error reply.

    Every failing use (str, iteration, truth, arithmetic...) raises
    ``self._undefined_exception(message)``; we make that our exception type.
    """

    __slots__ = ()

    def __init__(self, hint: str | None = None, obj: Any = missing, name: str | None = None,
                 exc: Any = None) -> None:
        super().__init__(hint, obj, name, partial(_MissingVariable, name))


_PADDING_METHODS = frozenset({"center", "ljust", "rjust", "zfill", "expandtabs"})


class _Sandbox(SandboxedEnvironment):
    """The sandbox, refusing unsafe attributes at once even where missing values are lenient,
    and counting every operator and call against the render budget (budget.py): refused before
    it runs when its one result would be over it, its CPU time checked before, what it built
    counted after."""

    # Intercepted, so also never folded into a constant when the template compiles.
    intercepted_binops = frozenset({"*", "**", "+", "-", "/", "//", "%"})

    def __init__(self, **options: Any) -> None:
        super().__init__(finalize=budget.check_printed, **options)
        for name in ("center", "indent"):
            self.filters[name] = _width_checked(name, self.filters[name])
        # Filters are called directly by the compiled template, not through call().
        for name, fn in list(self.filters.items()):
            self.filters[name] = _counted(name, fn)

    def wrap_str_format(self, value: Any) -> Any:
        """``str.format`` as the sandbox wraps it (at attribute access), with its widths checked first."""
        wrapped = super().wrap_str_format(value)
        if wrapped is None:
            return None
        owner, is_map = value.__self__, value.__name__ == "format_map"

        @wraps(wrapped)
        def checked(*args: Any, **kwargs: Any) -> Any:
            mapping = (args[0] if args and isinstance(args[0], dict) else {}) if is_map else kwargs
            budget.check_format(owner, () if is_map else args, mapping)
            return wrapped(*args, **kwargs)
        return checked

    def unsafe_undefined(self, obj: Any, attribute: str) -> Any:
        raise jinja2.exceptions.SecurityError(
            f"access to attribute {attribute!r} of {type(obj).__name__!r} object is unsafe")

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        budget.before_step()
        budget.check_binop(operator, left, right)
        result = super().call_binop(context, operator, left, right)
        budget.after_step(result)
        return result

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805 - Jinja's signature
        budget.before_step()
        if isinstance(getattr(__obj, "__self__", None), str) and getattr(__obj, "__name__", "") in _PADDING_METHODS:
            budget.check_width(__obj.__name__, args[0] if args else next(iter(kwargs.values()), None))
        result = super().call(__context, __obj, *args, **kwargs)
        budget.after_step(result)
        return result


# What a filter's input says about its output before it runs (budget.py).
_BEFORE_FILTER = {
    "string": lambda value, *args, **kwargs: budget.check_printed(value),
    "pprint": lambda value, *args, **kwargs: budget.check_printed(value),
    "format": lambda value, *args, **kwargs: budget.check_printf(value, args or kwargs),
}


def _counted(name: str, fn: Any) -> Any:
    """``fn`` (a filter) with its CPU time checked before and what it built counted after."""
    skip = 1 if getattr(fn, "jinja_pass_arg", None) is not None else 0   # the context or environment
    before = _BEFORE_FILTER.get(name)

    @wraps(fn)
    def counted(*args: Any, **kwargs: Any) -> Any:
        budget.before_step()
        if before is not None and len(args) > skip:
            before(*args[skip:], **kwargs)
        result = fn(*args, **kwargs)
        budget.after_step(result)
        return result
    return counted


def _width_checked(name: str, fn: Any) -> Any:
    @wraps(fn)
    def checked(value: Any, width: Any = 80, *args: Any, **kwargs: Any) -> Any:
        budget.check_width(name, width)
        return fn(value, width, *args, **kwargs)
    return checked


@contextmanager
def compiling() -> Iterator[budget.RenderBudget]:
    """Compile what the block compiles within a budget of its own, the size of a render's.

    Jinja folds the constant parts of a template while it compiles it: the
    optimizer and the output code call a filter of literals with the
    environment's filters (this sandbox's, which check the budget in force),
    a test, an item or attribute lookup through the sandbox, and
    ``{% autoescape %}``'s value; operators it never folds here, since the
    sandbox intercepts them all.  Without a budget in force those calls ran
    unchecked (``{{ ([1]|slice(30000000))|list|length }}``: 14-25 s, 2 GB).
    Jinja takes a folding's error for "not a constant" and goes on, so the
    budget is looked at after: gone over once, the compile is over it.
    """
    with budget.RenderBudget(doing="compiling") as allowance:
        yield allowance
    if allowance.over is not None:
        raise budget.BudgetExceeded(allowance.over)


def _environment(strict: bool = False) -> SandboxedEnvironment:
    """Strict: a missing variable raises; lenient (upstream's ibis): it is empty, false and chainable."""
    undefined = _Strict if strict else jinja2.ChainableUndefined
    return _Sandbox(undefined=undefined, autoescape=False, keep_trailing_newline=True)
