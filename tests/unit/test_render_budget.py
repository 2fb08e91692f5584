"""What rendering a request's templates may cost (prompt/template/budget.py)."""

from __future__ import annotations

import json
import re
import time

import pytest
from trustgraph.prompt.template import budget
from trustgraph.prompt.template.templates import PromptError, PromptSet


def render(source: str, **terms: object) -> str:
    ps = PromptSet.from_config({"template-index": json.dumps(["t"]), "template.t": json.dumps({"prompt": source})})
    assert ps.errors == {}
    return ps.render("t", {k: json.dumps(v) for k, v in terms.items()}).prompt


@pytest.mark.parametrize("source, says", [
    ("{% for i in range(10000) %}{% for j in range(10000) %}{% endfor %}{% endfor %}", "1s of CPU time"),
    ("{% for i in range(99999) %}{{ 'y' * 100000 }}{% endfor %}", "over 4,194,304 characters"),
    ("{{ 'x' * 10**10 }}", "str * 10000000000 is over"),
    ("{% set n = 10 %}{{ [1, 2] * (n ** 9) }}", "list * 1000000000 is over"),
    ("{{ 9 ** 9999999 }}", "an exponent over 4096"),
    ("{{ 'x'|center(10**9) }}", "center to 1,000,000,000 characters"),
    ("{{ 'x'|indent(10**9, true) }}", "indent to 1,000,000,000 characters"),
    ("{{ 'x'.rjust(10**9) }}", "rjust to 1,000,000,000 characters"),
    ("{{ 'x'.zfill(width=10**9) }}", "zfill to 1,000,000,000 characters"),
    # Every operator counts: sizes before it runs, what it builds after.
    ("{{ (10**4096)**4096 % 7 }}", "a power of over 65,536 bits"),
    ("{% set n = 10**4000 %}{{ (n*n*n*n*n*n) % 7 }}", "a product of integers over 65,536 bits"),
    ("{% set l=[1]*4000000 %}{{ (l+l+l+l+l+l+l+l+l+l)|length }}", "list + list is over 4,194,304 items"),
    ("{% for i in range(100) %}{% set l = [1]*4000000 %}{% endfor %}", "the values it built are over"),
    ('{{ ("x"*4000000)|replace("x","xx")|replace("x","xx")|length }}', "the values it built are over"),
    ('{{ "%999999999d" % 1 }}', "a format width of 999,999,999 characters"),
    ('{{ "%*d" % (999999999, 1) }}', "a format width of 999,999,999 characters"),
    ('{{ "%999999999s"|format(1) }}', "a format width of 999,999,999 characters"),
    ('{{ "{:>999999999}".format(1) }}', "a format width of 999,999,999 characters"),
    ('{{ "{:{}}".format(1, 999999999) }}', "a format width of 999,999,999 characters"),
    ('{{ "{a:>999999999}".format_map({"a": 1}) }}', "a format width of 999,999,999 characters"),
    ("{{ (range(100000)|list) * 40 }}", "printing a list of 4,000,000 items"),
    ("{{ ((range(100000)|list) * 40)|string|length }}", "printing a list of 4,000,000 items"),
])
def test_a_template_over_its_budget_is_refused_saying_why(source, says):
    started = time.thread_time()
    with pytest.raises(PromptError, match="^template 't' is over its render budget: ") as e:
        render(source)
    assert says in str(e.value)
    # Stopped at the budget, not after the work: 1 s of CPU, plus the check's granularity.
    assert time.thread_time() - started < budget.CPU_SECONDS + 1.0


def test_ordinary_templates_are_unaffected():
    assert render("{% for t in tools %}{{ t|center(12) }}|{% endfor %}{{ 'ab' * 3 }}{{ 2 ** 10 }}",
                  tools=["a", "b"]) == "     a      |     b      |ababab1024"
    assert render('{{ 7 % 3 }} {{ 7 // 2 }} {{ 7 / 2 }} {{ 1 - 3 }} {{ [1] + [2] }} {{ "a" + "b" }} '
                  '{{ "%s-%03d" % ("x", 5) }} {{ "%s!"|format("hi") }} {{ "{} {:>3}".format(1, 2) }} '
                  '{{ [1, 2]|join(",") }} {{ {"k": 1}|tojson }} {{ (10**100) % 7 }}') == \
        '1 3 3.5 -2 [1, 2] ab x-005 hi! 1   2 1,2 {"k": 1} 4'


def test_a_step_that_takes_long_is_stopped_at_the_next_one():
    # Each iteration is two steps (a list of 4 million, then its sum), too few traced events for the
    # line trace to look at the time in between: the time is looked at before every step.
    started = time.thread_time()
    with pytest.raises(PromptError, match="over its render budget: "):
        render("{% for i in range(1000) %}{{ ([i] * 3000000)|sum }}{% endfor %}")
    assert time.thread_time() - started < budget.CPU_SECONDS + 1.0


def test_the_budget_restores_the_threads_trace_function():
    import sys
    seen = []

    def outer(frame, event, arg):
        seen.append(event)
        return None

    sys.settrace(outer)
    try:
        render("{{ 1 }}")
        assert sys.gettrace() is outer
    finally:
        sys.settrace(None)


@pytest.mark.parametrize("source", [
    # Folded into a constant while Jinja compiles: a filter of literals, {% autoescape %}'s value.
    "{{ ([1]|slice(30000000))|list|length }}",
    "{% autoescape ([1]|slice(30000000))|list|length %}x{% endautoescape %}",
    # Long enough that reading it takes seconds (700 KB: 8 s).
    "{{ a }}" * 100_000,
])
def test_a_template_over_its_compile_budget_is_refused_when_first_used(source):
    started = time.thread_time()
    ps = PromptSet.from_config({"template-index": json.dumps(["t", "ok"]), "template.t": json.dumps({"prompt": source}),
                                "template.ok": json.dumps({"prompt": "{{ ([1, 2]|slice(2))|list|length }}"})})
    assert time.thread_time() - started < 0.5   # loading compiles nothing
    with pytest.raises(PromptError, match="^template 't' is over its compile budget: compiling took more than 1s"):
        ps.render("t", {})
    assert time.thread_time() - started < budget.CPU_SECONDS + 1.0
    assert ps.render("ok", {}).prompt == "2"   # folded as before, within its budget


@pytest.mark.parametrize("source, says", [
    ("{{ " + "9" * 5000 + " }}", "does not compile: ValueError: Exceeds the limit (4300 digits)"),
    ("{{ " + "(" * 5000 + "1" + ")" * 5000 + " }}", "does not compile: it is nested too deeply"),
])
def test_what_a_template_makes_the_compiler_fail_on_is_that_templates_problem(source, says):
    ps = PromptSet.from_config({"template-index": json.dumps(["t"]), "template.t": json.dumps({"prompt": source})})
    with pytest.raises(PromptError, match=f"^template 't' {re.escape(says)}"):
        ps.render("t", {})
