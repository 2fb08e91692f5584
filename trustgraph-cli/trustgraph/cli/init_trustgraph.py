"""Prepares a broker for TrustGraph: its tenant and namespaces on Apache Pulsar, and
optionally the initial config, as upstream 2.1.4's command of the same name and flags.

Why it exists: on Apache Pulsar the ``tg`` tenant and its ``flow``, ``request``,
``response`` and ``config`` namespaces must exist before any processor can open
its topics, and the two namespaces whose messages matter later get retention
policies.  What it does, in order, every step idempotent (a second run changes
nothing and succeeds):

1. Asks the admin URL (``-p``) which broker answers there (``pulsar_admin``).
2. On Apache Pulsar: creates the tenant (``-t``, allowed on every cluster the
   broker lists) and the four namespaces, each only if it is missing (one that
   exists is left as it is, its policies included): ``response`` keeps messages
   3 minutes whatever their size, ``config`` up to 10 MB for ever, and idle
   subscriptions expire after 30 and 5 minutes.  Upstream sends that expiry
   inside the retention policy, where Pulsar ignores it; this one sends it as
   the namespace's ``subscription_expiration_time_minutes``.
   On pulsar-lite (``tg-launch``'s embedded broker, which serves no admin API)
   there is nothing to create: it creates topics on first use.  One line says
   so, and the command goes on.
3. With ``-c JSON`` or ``-C FILE`` (``{type: {key: value}}``, every value
   stored as JSON text, as upstream does): asks config-svc over the broker
   (``--pulsar-host``) for its version and loads the items only into an empty
   store (version 0), so a restart never overwrites what an operator changed;
   this works with our config-svc and upstream's.  ``tg-launch`` loads its own
   bootstrap this way, so against its stack the step says which version it
   kept; ``tg-import-config`` merges a file into a store that has config.
   Flows are not started here (upstream's command starts none either).

On RabbitMQ (no ``-p``, no ``$PULSAR_ADMIN_URL``, and ``$PUBSUB_BACKEND`` or a
tg-launch stack in the data directory says RabbitMQ) there is nothing to
create either: the processors declare their exchanges and queues.  One line
says so; an initial config is refused there (this command's config client
speaks Pulsar only), the line naming ``tg-import-config``, which goes through
the gateway.

Unlike upstream's, which retries forever, it gives up: a failure that may
pass (nothing listens yet, a broker still starting) is one line on stderr and
another attempt after ``--retry-delay`` seconds, at most ``--attempts`` in
all; one that cannot (a refused token, a URL that is no broker's, an
unreadable config) ends it at once.  Either way the last line says what to do
and the exit status is 1.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from trustgraph.base.command_line import CliError, main_wrapper, number
from trustgraph.base.messaging.broker_url import BrokerUrlError, parse_broker_url, probe
from trustgraph.base.processors.broker_choice import choose_admin_url, choose_broker_url, rabbitmq_in_use
from trustgraph.base.processors.flags import amqp_url
from trustgraph.cli.pulsar_admin import DEFAULT_TIMEOUT, AdminError, Broker, PulsarAdmin, policies_text

PROG = "tg-init-trustgraph"

#: The namespaces under the tenant, and the policies each is created with.
NAMESPACES: dict[str, dict[str, Any]] = {
    "flow": {},
    "request": {},
    "response": {
        "retention_policies": {"retentionTimeInMinutes": 3, "retentionSizeInMB": -1},
        "subscription_expiration_time_minutes": 30,
    },
    "config": {
        "retention_policies": {"retentionTimeInMinutes": -1, "retentionSizeInMB": 10},
        "subscription_expiration_time_minutes": 5,
    },
}

Items = list[dict[str, str]]


def say(text: str) -> None:
    print(text, flush=True)


def initial_config(text: str, source: str) -> Items:
    """The items of an initial config ``{type: {key: value}}``, each value as JSON text."""
    try:
        doc = json.loads(text)
    except ValueError as e:
        raise CliError(f"the initial config ({source}) is not JSON: {e}") from None
    if not isinstance(doc, dict) or not all(isinstance(v, dict) for v in doc.values()):
        hint = ("; a tg-launch bootstrap file (with files and flows) is loaded by tg-launch --bootstrap"
                if isinstance(doc, dict) and ("files" in doc or "flows" in doc) else "")
        raise CliError(f"the initial config ({source}) must be a JSON object {{type: {{key: value}}}}, "
                       f"as upstream's tg-init-trustgraph reads it{hint}")
    return [{"type": str(t), "key": str(k), "value": json.dumps(v)} for t, entries in doc.items()
            for k, v in entries.items()]


def read_initial_config(args: argparse.Namespace) -> Items | None:
    if args.config is not None:
        return initial_config(args.config, "-c")
    if args.config_file is not None:
        try:
            text = Path(args.config_file).read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError) as e:
            raise CliError(f"cannot read the initial config {args.config_file}: "
                           f"{getattr(e, 'strerror', None) or e}") from None
        return initial_config(text, args.config_file)
    return None


def prepare_broker(admin: PulsarAdmin, tenant: str) -> Broker:
    """Step 1 and 2: the tenant and namespaces on Apache Pulsar, nothing on pulsar-lite."""
    broker = admin.identify()
    if broker.lite:
        say(f"{broker.describe()}: nothing to create there (it has no tenants or namespaces, "
            "and creates topics on first use)")
        return broker
    say(f"Broker: {broker.describe()}")
    if admin.tenant_exists(tenant):
        say(f"Tenant {tenant}: exists, left as it is")
    else:
        created = admin.create_tenant(tenant, broker.clusters)
        say(f"Tenant {tenant}: " + ("created" if created else "exists (created meanwhile), left as it is"))
    for name, policies in NAMESPACES.items():
        ns = f"{tenant}/{name}"
        if admin.namespace_exists(tenant, name):
            say(f"Namespace {ns}: exists, left as it is")
            continue
        created = admin.create_namespace(tenant, name, policies)
        say(f"Namespace {ns}: " + (f"created ({policies_text(policies)})" if created
                                   else "exists (created meanwhile), left as it is"))
    return broker


def load_config(items: Items, pulsar_url: str, pulsar_source: str, api_key: str | None, timeout: float) -> None:
    """Step 3: the items into config-svc, only when its store is empty."""
    from trustgraph.clients.config_client import ConfigClient  # pulsar-client: only when needed

    try:
        problem = asyncio.run(probe(parse_broker_url(pulsar_url)))
    except BrokerUrlError as e:
        raise AdminError(f"{e} (give --pulsar-host the broker's URL)", retry=False) from None
    if problem is not None:
        raise AdminError(f"cannot reach the broker at {pulsar_url} ({pulsar_source}): {problem}; start it, "
                         "or give its URL with --pulsar-host", retry=True)
    client = ConfigClient(subscriber=f"{PROG}-{uuid.uuid4()}", pulsar_host=pulsar_url, pulsar_api_key=api_key)
    try:
        try:
            # A get of no keys: the version alone, small whatever the size of the config.
            version = client.call(operation="get", keys=[], timeout=timeout).version
        except TimeoutError:
            raise AdminError(f"config-svc did not answer on {pulsar_url} within {timeout:g}s "
                             "(is it running?)", retry=True) from None
        except RuntimeError as e:
            raise AdminError(f"config-svc refused to say its version: {e}", retry=False) from None
        if version:
            say(f"Config: config-svc already holds config version {version}; nothing loaded (the initial "
                "config goes only into an empty store; tg-import-config merges a file into this one)")
            return
        try:
            client.put(items, timeout=timeout)
        except TimeoutError:
            raise AdminError(f"config-svc did not answer the put within {timeout:g}s", retry=True) from None
        except RuntimeError as e:
            raise AdminError(f"config-svc refused the initial config: {e}", retry=False) from None
        types = sorted({i["type"] for i in items})
        say(f"Config: loaded {len(items)} item(s) of {len(types)} type(s) ({', '.join(types)}) into the "
            "empty store")
    finally:
        client.close()


def init(args: argparse.Namespace) -> None:
    items = read_initial_config(args)   # bad input ends it before anything is touched
    pulsar_named = args.pulsar_admin_url or args.pulsar_host or os.environ.get("PULSAR_ADMIN_URL")
    if not pulsar_named and (rabbitmq := rabbitmq_in_use(PROG)) is not None:
        params, source = rabbitmq
        say(f"The broker is RabbitMQ at {amqp_url(params)} ({source}): nothing to create there (the "
            "processors declare their exchanges and queues)")
        if items is not None:
            raise CliError("an initial config is loaded over Pulsar only: load it through the gateway with "
                           "tg-import-config FILE")
        say("Initialisation complete.")
        return
    admin_url, admin_source = choose_admin_url(args.pulsar_admin_url)
    pulsar_url, pulsar_source = choose_broker_url(args.pulsar_host)
    if args.pulsar_host:   # here -p is the admin URL, as upstream's
        pulsar_source = "from --pulsar-host"
    try:
        admin = PulsarAdmin(admin_url, args.pulsar_api_key, args.timeout)
    except AdminError as e:
        raise CliError(str(e)) from None
    say(f"Initialising with the broker at {admin_url} ({admin_source})")
    step = "broker"
    for attempt in range(1, args.attempts + 1):
        try:
            if step == "broker":   # once done, a retry is of the config step alone
                prepare_broker(admin, args.tenant)
                step = "config"
            if items is None:
                say("Config: no initial config given (-c/-C); nothing loaded")
            else:
                load_config(items, pulsar_url, pulsar_source, args.pulsar_api_key, args.timeout)
            say("Initialisation complete.")
            return
        except AdminError as e:
            if not e.retry:
                raise CliError(str(e)) from None
            if attempt == args.attempts:
                hint = (f"; start the broker, or give its admin URL with -p (used: {admin_url}, {admin_source})"
                        if step == "broker" else "")
                raise CliError(f"gave up after {attempt} attempt(s): {e}{hint}") from None
            print(f"{PROG}: attempt {attempt} of {args.attempts} failed: {e}; retrying in "
                  f"{args.retry_delay:g}s", file=sys.stderr, flush=True)
            time.sleep(args.retry_delay)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description="Creates TrustGraph's tenant and namespaces on an "
                                "Apache Pulsar broker (nothing to create on pulsar-lite) and loads an initial "
                                "config into an empty config-svc.")
    p.add_argument("-p", "--pulsar-admin-url", default=None,
                   help="the broker's admin URL (default: $PULSAR_ADMIN_URL, else the embedded broker of the "
                        "stack running in ./.trustgraph or $TRUSTGRAPH_DATA, else http://localhost:8080; "
                        "upstream: http://pulsar:8080)")
    p.add_argument("--pulsar-host", default=None,
                   help="the broker URL, for loading the config (default: $PULSAR_HOST, else the running "
                        "stack's broker, else pulsar://localhost:6650)")
    p.add_argument("--pulsar-api-key", default=None,
                   help="Pulsar token, for the broker and its admin API (default: $PULSAR_API_KEY)")
    group = p.add_mutually_exclusive_group()
    group.add_argument("-c", "--config", help="initial config to load, as JSON {type: {key: value}}")
    group.add_argument("-C", "--config-file", help="initial config to load, from a file")
    p.add_argument("-t", "--tenant", default="tg", help="tenant (default: tg)")
    p.add_argument("--attempts", type=number(int, 1, exclusive=False), default=30,
                   help="attempts before giving up on a broker that is not reachable yet (default: 30)")
    p.add_argument("--retry-delay", type=number(), default=2.0,
                   help="seconds between attempts (default: 2)")
    p.add_argument("--timeout", type=number(), default=DEFAULT_TIMEOUT,
                   help=f"seconds each request may take (default: {DEFAULT_TIMEOUT:g})")
    return p


def run(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    args.pulsar_api_key = args.pulsar_api_key or os.environ.get("PULSAR_API_KEY") or None
    init(args)


def main(argv: list[str] | None = None) -> None:
    main_wrapper(PROG, lambda: run(argv))


if __name__ == "__main__":
    main()
