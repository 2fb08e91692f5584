"""Checks that a TrustGraph system is up and usable, one line per check, as upstream 2.1.4's
command of the same name and flags does, against a ``tg-launch`` stack as well as a
deployment on Apache Pulsar.

Why it exists: it is what an operator (or a deployment's readiness probe)
runs after starting the system, so each line says what is wrong and what to
do, and the exit status is 1 when any check fails.  The checks:

* **Pulsar**: which broker answers at its admin URL (``--pulsar-url``;
  ``pulsar_admin``): Apache Pulsar (whose tenant and four namespaces must
  exist: ``tg-init-trustgraph`` creates them) or pulsar-lite, tg-launch's
  embedded broker, which serves no admin API (upstream's check asks it for
  ``/admin/v2/clusters`` and fails on its 404).  **RabbitMQ** in its place
  when no ``--pulsar-url`` is given and the broker is RabbitMQ
  (``$PUBSUB_BACKEND``, or a tg-launch stack on RabbitMQ in the data
  directory): a node takes the processors' user (``$RABBITMQ_*``, or what the
  stack recorded).
* **API Gateway**: our gateway's ``/api/v1/health``; an upstream gateway,
  which has none, counts as up when it answers at all, as upstream's check has it.
* **Config Service**: config-svc answers through the gateway and holds
  config (version above 0).  Upstream has no such line; its prompts check
  fails the same way, less clearly.
* **Processors**: on a tg-launch stack (the gateway's health lists its
  components) every component is up, and at least ``--min-processors`` when
  given; elsewhere, as upstream, at least ``--min-processors`` (default 15)
  processors report ``processor_info`` to the Prometheus behind the gateway.
* **Flow Blueprints**, **Flows**, **Prompts**: at least one blueprint, the
  flow service answers, at least one prompt template (as upstream).
* **Library** and **Workbench UI**: as upstream on other deployments; on a
  tg-launch stack, which runs neither, a SKIP line (``--ui-url`` checks a UI
  there all the same).  ``--skip-ui`` leaves the UI out, as upstream.

Each check is tried again every ``--retry-delay`` seconds while it fails,
until it passes or ``--global-timeout`` runs out (so it also waits for a
system that is starting); each attempt waits at most ``--check-timeout``.
Every check is tried at least once, and the whole run ends close to the
global timeout whatever the system does.  A check that needs the gateway is
not tried while the gateway does not answer, and fails with it; the UI check
waits for the gateway's (which tells whether this is a tg-launch stack).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from trustgraph.base.command_line import (
    CliError,
    GatewayClient,
    add_api_args,
    main_wrapper,
    normalise_url,
    number,
    os_cause,
)
from trustgraph.base.processors.async_processor import rabbitmq_problem
from trustgraph.base.processors.broker_choice import choose_admin_url, rabbitmq_in_use
from trustgraph.base.processors.flags import RABBITMQ_DEFAULT_USER, amqp_url
from trustgraph.cli.init_trustgraph import NAMESPACES
from trustgraph.cli.pulsar_admin import AdminError, PulsarAdmin

PROG = "tg-verify-system-status"
DEFAULT_UI_URL = "http://localhost:8888"
DEFAULT_MIN_PROCESSORS = 15   # upstream's, for a deployment that is not tg-launch's
#: The shortest wait an attempt gets, even when the global timeout has (almost) run out.
MIN_ATTEMPT = 1.0

OK, FAIL, SKIP = "OK", "FAIL", "SKIP"
GATEWAY = "API Gateway"


@dataclass
class Result:
    status: str
    text: str


@dataclass
class Check:
    """One check: ``run(timeout)`` makes one attempt."""

    name: str
    run: Callable[[float], Result]
    #: "needs": not tried without the gateway, fails with it; "after": tried once the gateway's check
    #: is settled, whatever its result (it decides whether the check applies); "": independent.
    gateway: str = "needs"
    attempts: int = 0
    last: Result | None = None


@dataclass
class System:
    """What the checks share: the flags, the gateway client and what the gateway said of itself."""

    args: argparse.Namespace
    api: GatewayClient
    admin_url: str
    admin_source: str
    health: dict[str, Any] | None = None
    #: The RabbitMQ settings (``--rabbitmq-*`` names) when the broker is RabbitMQ, and where they came from.
    rabbitmq: tuple[dict[str, Any], str] | None = None

    @property
    def launched(self) -> bool:
        """Whether this is a tg-launch stack: its gateway's health lists the components."""
        return isinstance(self.health, dict) and isinstance(self.health.get("components"), dict)

    # ------------------------------------------------------------ the checks

    def pulsar(self, timeout: float) -> Result:
        admin_hint = f"give --pulsar-url the broker's admin URL (used: {self.admin_url}, {self.admin_source})"
        try:
            admin = PulsarAdmin(self.admin_url, self.args.pulsar_api_key, timeout)
            broker = admin.identify()
            if broker.lite:
                return Result(OK, broker.describe())
            tenant = self.args.tenant
            if not admin.tenant_exists(tenant):
                return Result(FAIL, f"{broker.describe()}, has no tenant {tenant}: create it with "
                                    f"tg-init-trustgraph -p {self.admin_url}")
            missing = [f"{tenant}/{ns}" for ns in NAMESPACES if not admin.namespace_exists(tenant, ns)]
        except AdminError as e:
            return Result(FAIL, f"{e}; {admin_hint}" if e.retry else str(e))
        if missing:
            return Result(FAIL, f"{broker.describe()}, lacks the namespace(s) {', '.join(missing)}: create them "
                                f"with tg-init-trustgraph -p {self.admin_url}")
        return Result(OK, f"{broker.describe()}, tenant {tenant} and its namespaces in place")

    def rabbitmq_node(self, timeout: float) -> Result:
        assert self.rabbitmq is not None
        params, source = self.rabbitmq
        problem = asyncio.run(rabbitmq_problem(params, PROG, hint="is it running? (the settings are "
                                               f"{source or 'from $RABBITMQ_*'})"))
        if problem is not None:
            return Result(FAIL, problem)
        user = params.get("rabbitmq_username") or RABBITMQ_DEFAULT_USER
        return Result(OK, f"{amqp_url(params)} takes user {user} ({source or 'from $RABBITMQ_*'})")

    def gateway(self, timeout: float) -> Result:
        url = self.api.url
        r = self.api.fetch("api/v1/health", timeout)   # CliError (no reply) is the check's failure
        if r.status_code == 401:
            return Result(FAIL, f"the gateway at {url} wants a token: give -t or set TRUSTGRAPH_TOKEN")
        if r.status_code in (200, 503):   # 503: the stack is still starting, said in the body
            try:
                health = json.loads(r.content.decode("utf-8"))
            except ValueError:
                health = None
            if isinstance(health, dict) and "status" in health:
                self.health = health
                return Result(OK, f"{url} answers, health {health.get('status')}")
        # Not this fork's gateway: upstream's has no health endpoint, and its check takes any answer.
        base = self.api.fetch("", timeout)
        if base.status_code in (200, 404):
            self.health = None
            return Result(OK, f"{url} answers (no /api/v1/health there: an upstream gateway?)")
        return Result(FAIL, f"{url} answers HTTP {base.status_code}: is it the API gateway's URL (--api-url)?")

    def config_service(self, timeout: float) -> Result:
        reply = self.api.post("api/v1/config", {"operation": "get", "keys": []}, timeout=timeout)
        version = reply.get("version")
        if not version:
            return Result(FAIL, "config-svc answers but holds no config (version 0): load one with "
                                "tg-init-trustgraph -C FILE or tg-import-config FILE")
        return Result(OK, f"config-svc answers, config version {version}")

    def processors(self, timeout: float) -> Result:
        wanted = self.args.min_processors
        if self.launched:   # the components' states now, not as they were at the gateway check
            self.gateway(timeout)
        if self.launched:
            return self._components(self.health["components"], wanted)
        if wanted == 0:
            return Result(SKIP, "not counted (--min-processors 0)")
        wanted = DEFAULT_MIN_PROCESSORS if wanted is None else wanted
        r = self.api.fetch("api/metrics/query?query=processor_info", timeout)
        try:
            body = json.loads(r.content.decode("utf-8"))
        except ValueError:
            body = None
        results = (body.get("data") or {}).get("result") if isinstance(body, dict) else None
        if r.status_code != 200 or not isinstance(results, list):
            said = body.get("error") if isinstance(body, dict) and body.get("error") else f"HTTP {r.status_code}"
            return Result(FAIL, f"cannot count the processors: the gateway's Prometheus proxy answered {said}; "
                                "give the gateway a Prometheus (--prometheus-url) or --min-processors 0 here")
        if len(results) < wanted:
            return Result(FAIL, f"{len(results)} processor(s) report to Prometheus, fewer than {wanted} "
                                "(--min-processors): start the missing ones, or see their logs")
        return Result(OK, f"{len(results)} processor(s) report to Prometheus (at least {wanted})")

    def _components(self, components: dict[str, Any], wanted: int | None) -> Result:
        if all(isinstance(v, dict) for v in components.values()):
            down = {name: c for name, c in components.items() if c.get("state") != "up"}
            total, up = len(components), len(components) - len(down)
            named = ", ".join(f"{n} ({c.get('state')}" + (f", log {c['log']}" if c.get("log") else "") + ")"
                              for n, c in sorted(down.items()))
        else:   # without the token the gateway says only how many are in each state
            counts = {str(k): int(v) for k, v in components.items() if isinstance(v, int)}
            total, up = sum(counts.values()), counts.get("up", 0)
            named = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()) if s != "up")
        if up < total:
            return Result(FAIL, f"{total - up} of {total} components of the tg-launch stack not up: {named}; "
                                "tg-launch restarts them (see its terminal and their logs)")
        if wanted and up < wanted:
            return Result(FAIL, f"{up} components up, fewer than {wanted} (--min-processors): start the stack "
                                "without leaving them out (tg-launch --help lists --no-<component>)")
        return Result(OK, f"all {total} components of the tg-launch stack up")

    def blueprints(self, timeout: float) -> Result:
        names = self.api.post("api/v1/flow", {"operation": "list-blueprints"}, timeout=timeout).get(
            "blueprint-names") or []
        if not names:
            return Result(FAIL, "no flow blueprint: put one in config type flow-blueprint (tg-put-config-item)")
        return Result(OK, f"{len(names)} flow blueprint(s): {', '.join(sorted(names))}")

    def flows(self, timeout: float) -> Result:
        ids = self.api.post("api/v1/flow", {"operation": "list-flows"}, timeout=timeout).get("flow-ids") or []
        if not ids:
            return Result(OK, "the flow service answers; no flow runs (start one with tg-start-flow)")
        return Result(OK, f"the flow service answers; {len(ids)} flow(s): {', '.join(sorted(ids))}")

    def prompts(self, timeout: float) -> Result:
        reply = self.api.post("api/v1/config", {"operation": "get",
                                                "keys": [{"type": "prompt", "key": "template-index"}]},
                              timeout=timeout)
        values = reply.get("values") or []
        try:
            index = json.loads(values[0].get("value") or "[]") if values else []
        except (ValueError, AttributeError):
            index = None
        if not isinstance(index, list):
            return Result(FAIL, "config prompt/template-index is not a JSON list: fix it with tg-put-config-item")
        if not index:
            return Result(FAIL, "no prompt template (config prompt/template-index is empty or missing): "
                                "set one with tg-set-prompt")
        return Result(OK, f"{len(index)} prompt template(s)")

    def library(self, timeout: float) -> Result:
        if self.launched:
            return Result(SKIP, "tg-launch runs no librarian")
        reply = self.api.post("api/v1/librarian", {"operation": "list-documents", "user": "trustgraph"},
                              timeout=timeout)
        docs = reply.get("document-metadatas") or []
        return Result(OK, f"the librarian answers ({len(docs)} document(s) of user trustgraph)")

    def ui(self, timeout: float) -> Result:
        if self.launched and self.args.ui_url is None:
            return Result(SKIP, "tg-launch runs no Workbench UI (--ui-url checks one)")
        import requests

        url = normalise_url(self.args.ui_url or DEFAULT_UI_URL)
        try:
            r = requests.get(url + "index.html", timeout=timeout)
        except requests.Timeout:
            return Result(FAIL, f"no answer from {url} within {timeout:g}s: is the Workbench UI running?")
        except requests.RequestException as e:
            cause = os_cause(e)
            why = (getattr(cause, "strerror", None) or str(cause)) if cause else type(e).__name__
            return Result(FAIL, f"cannot reach the Workbench UI at {url}: {why}; start it, give its URL with "
                                "--ui-url, or --skip-ui on a headless deployment")
        if r.status_code != 200:
            return Result(FAIL, f"{url}index.html answers HTTP {r.status_code}: is --ui-url the Workbench's URL?")
        return Result(OK, f"{url} answers")


def attempt(check: Check, timeout: float) -> Result:
    """One attempt of ``check``; whatever goes wrong is its FAIL line, never the command's end."""
    check.attempts += 1
    try:
        return check.run(timeout)
    except CliError as e:
        return Result(FAIL, str(e))
    except Exception as e:  # noqa: BLE001 - one bad reply must not stop the other checks
        return Result(FAIL, f"unexpected {type(e).__name__}: {e}")


def report(check: Check, result: Result) -> None:
    print(f"{result.status:<5} {check.name}: {' '.join(result.text.split())}", flush=True)


def verify(system: System, checks: list[Check], global_timeout: float, check_timeout: float,
           retry_delay: float, verbose: bool) -> dict[str, Result]:
    """Run ``checks`` until each passes or the time is up; report each once, when it is settled.

    The results come back in the order of ``checks``."""
    start = time.monotonic()
    deadline = start + global_timeout
    pending = list(checks)
    settled: dict[str, Result] = {}
    said_waiting = False

    def settle(check: Check, result: Result) -> None:
        settled[check.name] = result
        pending.remove(check)
        report(check, result)

    while pending:
        for check in list(pending):
            gateway = settled.get(GATEWAY)
            if check.gateway and gateway is None:
                continue   # not before the gateway's check is settled
            if check.gateway == "needs" and gateway is not None and gateway.status == FAIL:
                settle(check, Result(FAIL, "not checked: the API gateway does not answer"))
                continue
            remaining = deadline - time.monotonic()
            if remaining <= 0 and check.attempts:
                settle(check, check.last or Result(FAIL, "not checked in time"))
                continue
            result = attempt(check, min(check_timeout, max(remaining, MIN_ATTEMPT)))
            check.last = result
            if result.status != FAIL or deadline - time.monotonic() < retry_delay:
                settle(check, result)
            elif verbose:
                print(f"      {check.name}: attempt {check.attempts} failed: {result.text}", flush=True)
        if not pending:
            break
        remaining = deadline - time.monotonic()
        if not said_waiting and remaining > 0:
            waiting = [c.name for c in pending if c.attempts]
            if waiting:
                print(f"WAIT  {', '.join(waiting)}: not ready yet; trying again every {retry_delay:g}s for up to "
                      f"{remaining:.0f}s" + ("" if verbose else " (-v shows each attempt)"), flush=True)
                said_waiting = True
        time.sleep(max(0.0, min(retry_delay, remaining)))
    # In the checks' order, not the order they settled in (which the load decides), so the
    # summary line names the failures the same way every run.
    return {c.name: settled[c.name] for c in checks}


def build_checks(system: System, skip_ui: bool) -> list[Check]:
    checks = [
        Check("RabbitMQ", system.rabbitmq_node, gateway="") if system.rabbitmq else
        Check("Pulsar", system.pulsar, gateway=""),
        Check(GATEWAY, system.gateway, gateway=""),
        Check("Config Service", system.config_service),
        Check("Processors", system.processors),
        Check("Flow Blueprints", system.blueprints),
        Check("Flows", system.flows),
        Check("Prompts", system.prompts),
        Check("Library", system.library),
    ]
    if not skip_ui:
        checks.append(Check("Workbench UI", system.ui, gateway="after"))
    return checks


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description="Checks that a TrustGraph system is up: broker, gateway, "
                                "config, processors, flows, prompts (and, beyond a tg-launch stack, the "
                                "librarian and the Workbench UI); one line per check.")
    p.add_argument("--global-timeout", type=number(), default=120.0,
                   help="seconds for the whole run, retries included (default: 120)")
    p.add_argument("--check-timeout", type=number(), default=10.0,
                   help="seconds one attempt of a check may wait (default: 10)")
    p.add_argument("--retry-delay", type=number(), default=3.0,
                   help="seconds between attempts of a failing check (default: 3)")
    p.add_argument("--min-processors", type=number(int, 0, exclusive=False), default=None,
                   help="processors required (default: on a tg-launch stack, every component up; elsewhere "
                        f"{DEFAULT_MIN_PROCESSORS}, counted through Prometheus, as upstream; 0: not counted)")
    p.add_argument("--pulsar-url", default=None,
                   help="the broker's admin URL (default: $PULSAR_ADMIN_URL, else the embedded broker of the "
                        "stack running in ./.trustgraph or $TRUSTGRAPH_DATA, else http://localhost:8080)")
    p.add_argument("--pulsar-api-key", default=None,
                   help="Pulsar token for its admin API (default: $PULSAR_API_KEY)")
    p.add_argument("--tenant", default="tg", help="the tenant whose namespaces Apache Pulsar must have "
                   "(default: tg)")
    add_api_args(p)
    p.add_argument("--ui-url", default=None,
                   help=f"Workbench UI URL (default: {DEFAULT_UI_URL}; not checked on a tg-launch stack "
                        "unless given)")
    p.add_argument("--skip-ui", action="store_true", help="leave the UI check out (headless deployments)")
    p.add_argument("-v", "--verbose", action="store_true", help="show every failed attempt")
    return p


def run(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    args.pulsar_api_key = args.pulsar_api_key or os.environ.get("PULSAR_API_KEY") or None
    admin_url, source = choose_admin_url(args.pulsar_url)
    system = System(args, GatewayClient(args.api_url, args.token, args.check_timeout), admin_url, source,
                    rabbitmq=None if args.pulsar_url else rabbitmq_in_use(PROG))
    start = time.monotonic()
    results = verify(system, build_checks(system, args.skip_ui), args.global_timeout, args.check_timeout,
                     args.retry_delay, args.verbose)
    failed = [name for name, r in results.items() if r.status == FAIL]
    skipped = sum(1 for r in results.values() if r.status == SKIP)
    took = time.monotonic() - start
    if failed:
        raise CliError(f"{len(failed)} of {len(results)} checks failed ({', '.join(failed)}) in {took:.1f}s; "
                       "see their FAIL lines above")
    print(f"All {len(results) - skipped} checks passed" + (f" ({skipped} skipped)" if skipped else "")
          + f" in {took:.1f}s: the system is up.", flush=True)


def main(argv: list[str] | None = None) -> None:
    main_wrapper(PROG, lambda: run(argv))


if __name__ == "__main__":
    main()
