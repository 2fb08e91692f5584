"""interop/upstream_processors.py's pure parts: a traceback's root cause, the grouping, the import reading.

The measure itself (upstream trustgraph-flow's console scripts started in a venv made from PyPI)
needs the network; these parts decide what it reports and need nothing.
"""

from __future__ import annotations

import sys

from support import REPO

sys.path.insert(0, str(REPO))

from interop.upstream_processors import Cause, Result, group, imports_of, needs_of, root_cause  # noqa: E402

SITE = "/work/x/.interop/flow-on-ours/lib/python3.13/site-packages"


def traceback(*frames: str, last: str) -> str:
    lines = ["Traceback (most recent call last):"]
    for frame in frames:
        lines += [f'  File "{frame}", line 12, in <module>', "    from x import y"]
    return "\n".join([*lines, last]) + "\n"


def test_a_missing_name_is_reported_without_the_path_and_where_upstream_asked_for_it():
    text = traceback("/usr/lib/python3.13/importlib/__init__.py", f"{SITE}/trustgraph/model/openai/llm.py",
                     last="ImportError: cannot import name 'LlmService' from 'trustgraph.base' "
                          f"({SITE}/trustgraph/base/__init__.py)")
    assert root_cause(text) == Cause("ImportError: cannot import name 'LlmService' from 'trustgraph.base'",
                                     "trustgraph/model/openai/llm.py:12")


def test_a_missing_module_keeps_only_its_name():
    text = traceback(f"{SITE}/trustgraph/gateway/service.py",
                     last="ModuleNotFoundError: No module named 'trustgraph.base.logging'")
    assert root_cause(text).cause == "ModuleNotFoundError: No module named 'trustgraph.base.logging'"


def test_the_exception_that_escaped_is_the_cause_not_the_one_it_was_raised_from():
    first = traceback(f"{SITE}/a.py", last="KeyError: 'x'")
    text = (first + "\nDuring handling of the above exception, another exception occurred:\n\n"
            + traceback(f"{SITE}/b.py", last="TypeError: RequestResponseSpec.__init__() got an unexpected "
                                             "keyword argument 'request_name'"))
    cause = root_cause(text)
    assert cause.cause.startswith("TypeError: RequestResponseSpec.__init__() got an unexpected keyword")
    assert cause.where == "b.py:12"


def test_paths_and_addresses_do_not_split_one_cause_in_two():
    one = root_cause(traceback(f"{SITE}/a.py", last="RuntimeError: bad <object at 0x7f00aa> in /venv/one/x.py"))
    two = root_cause(traceback(f"{SITE}/a.py", last="RuntimeError: bad <object at 0x7f11bb> in /venv/two/x.py"))
    assert one.cause == two.cause


def test_output_without_a_traceback_says_so():
    assert root_cause("usage: x [-h]\nx: error: unrecognized arguments: --help-me\n").cause.startswith(
        "no exception: x: error")
    assert root_cause("").cause == "no exception: no output"


def test_failures_group_by_cause_the_biggest_group_first():
    results = [Result("a", "m:run", False, "import", "E1"), Result("b", "m:run", False, "import", "E2"),
               Result("c", "m:run", False, "help", "E2"), Result("d", "m:run", True)]
    assert group(results) == [("E2", ["b", "c"]), ("E1", ["a"])]


def test_imports_are_resolved_against_the_module_and_its_package():
    source = ("import os\nimport trustgraph.rdf\nfrom trustgraph.base import LlmService, LlmResult\n"
              "from ... base import FlowProcessor\nfrom . tools import KnowledgeQueryImpl\nfrom . import types\n"
              "def later():\n    from trustgraph.base.logging import setup_logging\n")
    found = imports_of(source, "trustgraph.agent.react.service", is_package=False)
    assert set(found) == {("os", None), ("trustgraph.rdf", None), ("trustgraph.base", "LlmService"),
                          ("trustgraph.base", "LlmResult"), ("trustgraph.base", "FlowProcessor"),
                          ("trustgraph.agent.react.tools", "KnowledgeQueryImpl"),
                          ("trustgraph.agent.react", "types"), ("trustgraph.base.logging", "setup_logging")}
    # In a package's __init__, "." is the package itself.
    assert imports_of("from . service import run\n", "trustgraph.agent.react", is_package=True) == [
        ("trustgraph.agent.react.service", "run")]


def test_needs_follow_flows_own_modules_and_packages_but_stop_at_the_base():
    modules = {
        "trustgraph": ("", True),
        "trustgraph.model": ("from trustgraph.base import ProcessorMetrics\n", True),
        "trustgraph.model.openai": ("from . llm import *\n", True),
        "trustgraph.model.openai.llm": ("from trustgraph.base import LlmService\nfrom .. import shared\n", False),
        "trustgraph.model.shared": ("from trustgraph.schema import TextCompletionRequest\nimport openai\n", False),
        "trustgraph.model.unused": ("from trustgraph.rdf import RDF_LABEL\n", False),
    }
    assert needs_of(modules, "trustgraph.model.openai") == {
        ("trustgraph.base", "ProcessorMetrics"), ("trustgraph.base", "LlmService"),
        ("trustgraph.schema", "TextCompletionRequest")}
