"""tg-launch: run the whole stack on one machine with one command.

Starts the embedded pulsar-lite broker on 127.0.0.1 (unless --pulsar-host
points at an existing Pulsar, or --pubsub-backend rabbitmq names a RabbitMQ
the user runs: --rabbitmq-host, --rabbitmq-port, ...), then config-svc, loads the bootstrap config
into an empty store, then the other processors, each as a child process with
its output in ``<data-dir>/logs/<name>.log``.  Ctrl-C, SIGTERM or SIGHUP stops
every child and then the broker, during start-up too, with exit status 0 (a stop asked
for is no failure; under ``make run`` make then ends as interrupted itself, and a SIGINT
to make alone is noticed: ``processes.watch_make``); should tg-launch die otherwise (SIGKILL), the
kernel stops them (``PR_SET_PDEATHSIG``).  A process that dies (the broker too) is restarted
with a back-off and shown again once ready; one that keeps dying is given up
on, and without the broker, config-svc or api-gateway the whole stack stops.

One stack per data directory: a second tg-launch on it is refused before it
touches anything.  The gateway, mcp-server and the metrics servers listen on
127.0.0.1 unless --host says otherwise, the embedded broker and its metrics
unless --broker-host does; what other machines can reach is said in one line
each before anything starts.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import secrets
import shutil
import signal
import sys
from pathlib import Path
from typing import Any

from trustgraph.base import PubSub
from trustgraph.base.launching.broker import BrokerError, EmbeddedBroker, free_port
from trustgraph.base.launching.listening import local_address, port_taken
from trustgraph.base.launching.stack import STACK_STATUS_ENV, AlreadyRunning, RunFiles
from trustgraph.base.messaging.broker_url import BrokerUrlError, parse_broker_url, probe
from trustgraph.base.processors.async_processor import StartRefused, rabbitmq_problem, rabbitmq_transport
from trustgraph.base.processors.flags import TokenFileError, add_backend_args, amqp_url, rabbitmq_password
from trustgraph.base.safety import logsafe
from trustgraph.base.safety.secrets import child_environment, redact_url
from trustgraph.base.wire import ENV as WIRE_ENV
from trustgraph.base.wire import wire_for
from trustgraph.schema import ConfigValue

from .bootstrap import BootstrapError, bootstrap, put_config
from .components import (
    BROKER_SECRETS,
    COMPONENTS,
    DEFAULT_MODEL,
    FIRST,
    Component,
    ComponentError,
    choose_llm,
    load_components,
    with_extra,
)
from .exposure import Exposure
from .processes import BrokerProcess, Child, make_parent, watch_make
from .supervisor import STATUS_WIDTH, RestartPolicy, Supervisor, say

logger = logging.getLogger("tg-launch")


#: What ends a start-up with one line (any other exception is a bug of ours: its traceback shows).
_START_ERRORS = (RuntimeError, BootstrapError, BrokerError, ComponentError, StartRefused)

#: tg-launch's own token file in ``--pulsar-token-dir`` (for the bootstrap and the settings it writes).
OWN_TOKEN = "tg-launch"


#: The agent's approval key in the data directory (``agent-manager-react --approval-key-file``).
APPROVAL_KEY = "approval.key"
APPROVAL_KEY_BYTES = 32


def approval_key(directory: Path) -> Path:
    """The stack's approval key file, made once (32 random bytes, mode 0600) and kept after: the
    agent signs the tokens of dialogs paused for approval with it, so a restarted agent still
    takes the ones it gave out."""
    path = directory / APPROVAL_KEY
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path
    with os.fdopen(fd, "wb") as f:
        f.write(secrets.token_bytes(APPROVAL_KEY_BYTES))
    return path


def announced_tools(text: str) -> str:
    """``--announced-tools``: ``all``, ``configured`` or service ids (comma-separated), as the JSON
    value of config ``tool-policy/announced``."""
    text = text.strip()
    if text in ("all", "configured"):
        return json.dumps(text)
    ids = [part.strip() for part in text.split(",") if part.strip()]
    if not ids:
        raise argparse.ArgumentTypeError("give all, configured, or tool-service ids separated by commas")
    return json.dumps(ids)


def default_bootstrap() -> Path | None:
    """config-examples/bootstrap.json in the working directory or in this checkout."""
    here = Path(__file__).resolve()
    for base in (Path.cwd(), *here.parents):
        candidate = base / "config-examples" / "bootstrap.json"
        if candidate.is_file():
            return candidate
    return None


class Launcher:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.data_dir = Path(args.data_dir).resolve()
        self.run_files = RunFiles(self.data_dir)
        # Clients on this machine reach a 0.0.0.0 listener through the loopback.
        self.local_host = local_address(args.host)
        self.mcp_port: int = args.mcp_port
        #: A RabbitMQ the user runs instead of a Pulsar (--pubsub-backend rabbitmq): no embedded broker.
        self.rabbitmq: bool = getattr(args, "pubsub_backend", "pulsar") == "rabbitmq"
        self.broker: EmbeddedBroker | None = None
        self.children: list[Child] = []
        self.stop_event = asyncio.Event()
        self.stop_reason = ""        # what asked for the stop (SIGINT, ...), said if it comes during start-up
        self.stopping_said = False
        self.supervisor = Supervisor(RestartPolicy(
            max_restarts=args.max_restarts, backoff=args.backoff, stable_after=args.stable_after),
            self.stop_event, report=self.run_files.set_components)

    def selected(self) -> list[Component]:
        llm = choose_llm(self.args.llm, self.args.model)
        skip = set(self.args.no or [])
        table = COMPONENTS
        if self.args.extra_components:
            table = with_extra(COMPONENTS, load_components(self.args.extra_components))
        out = []
        for comp in table:
            if comp.name in skip or (comp.llm is not None and comp.llm != llm):
                continue
            out.append(comp)
        return out

    def _fill(self, text: str, values: dict[str, Any]) -> str:
        return text.format(**values)

    def gateway_url(self) -> str:
        """What the status line and a refused second launch show for the gateway."""
        if "api-gateway" not in {c.name for c in self.selected()}:
            return ""
        shown = "localhost" if self.args.host == "127.0.0.1" else self.args.host
        return f"http://{shown}:{self.args.gateway_port}/"

    def exposure(self) -> Exposure:
        names = {c.name for c in self.selected()}
        return Exposure(self.args.host, None if self.args.pulsar_host or self.rabbitmq else self.args.broker_host,
                        "api-gateway" in names, "mcp-server" in names, bool(self.args.metrics), os.environ)

    def _say_exposure(self, broker_port: int | None = None, broker_metrics_port: int | None = None) -> None:
        """One line on stderr per thing other machines can reach (nothing when all stays local)."""
        self.mcp_port = self._mcp_port()
        for line in self.exposure().lines(self.args.gateway_port, self.mcp_port, broker_port, broker_metrics_port):
            print(f"tg-launch: {line}", file=sys.stderr, flush=True)

    def gateway_port_problem(self) -> str | None:
        """Why the gateway could not listen on ``--gateway-port``, asked before anything starts.

        A second stack (another ``--data-dir``) beside a running one finds 8088
        taken; the gateway's own failure would be a traceback in its log, and
        the user needs the flag, and a port that is free, on the line instead.
        """
        args = self.args
        if not self.gateway_url() or not port_taken(args.host, args.gateway_port):
            return None
        port = args.gateway_port
        free = next((p for p in range(port + 1, min(port + 100, 65536))
                     if p != args.mcp_port and not port_taken(args.host, p)), None)
        shown = "localhost" if args.host == "127.0.0.1" else args.host
        where = "" if args.host == "127.0.0.1" else f" on {args.host}"
        if free is None:
            return (f"the gateway's port {port} is already in use{where} (by another stack or program); "
                    f"choose a free one with --gateway-port, or stop what holds it")
        return (f"the gateway's port {port} is already in use{where} (by another stack or program); "
                f"choose another with --gateway-port, e.g. make run ARGS=\"--gateway-port {free}\" "
                f"(and TRUSTGRAPH_URL=http://{shown}:{free}/ for the tg-* commands), or stop what holds it")

    def _mcp_port(self) -> int:
        """--mcp-port, or a free port when that one is taken (the status line shows which)."""
        if not port_taken(self.args.host, self.args.mcp_port):
            return self.args.mcp_port
        return free_port(self.local_host)

    def _metrics_port(self, index: int) -> int:
        """Each child its own port: given a base, base + index; else a free one."""
        base = self.args.metrics_base_port
        return base + index if base else free_port(self.local_host)

    def token_file(self, name: str) -> Path | None:
        """``--pulsar-token-dir``'s token of component ``name`` (``<dir>/<name>.token``), if it has one."""
        if not self.args.pulsar_token_dir:
            return None
        path = Path(self.args.pulsar_token_dir) / f"{name}.token"
        return path if path.is_file() else None

    def own_token(self) -> str | None:
        """tg-launch's own Pulsar token: its file in the token dir, else ``$PULSAR_API_KEY``."""
        path = self.token_file(OWN_TOKEN)
        if path is not None:
            return path.read_text().strip() or None
        return os.environ.get("PULSAR_API_KEY") or None

    def broker_args(self, pulsar_url: str) -> tuple[list[str], dict[str, str]]:
        """The flags and environment that put a child on the stack's broker.

        On RabbitMQ: the ``--rabbitmq-*`` flags, with the password as a file's path (the
        ``--rabbitmq-password-file`` given) or in ``$RABBITMQ_PASSWORD``, never on a command line
        that ``ps`` shows."""
        if not self.rabbitmq:
            return ["--pulsar-host", pulsar_url], {}
        a = self.args
        argv = ["--pubsub-backend", "rabbitmq", "--rabbitmq-host", a.rabbitmq_host, "--rabbitmq-port",
                str(a.rabbitmq_port), "--rabbitmq-username", a.rabbitmq_username, "--rabbitmq-vhost", a.rabbitmq_vhost]
        if a.rabbitmq_password_file:
            return [*argv, "--rabbitmq-password-file", str(Path(a.rabbitmq_password_file).absolute())], {}
        return argv, ({"RABBITMQ_PASSWORD": a.rabbitmq_password} if a.rabbitmq_password else {})

    def _child(self, comp: Component, pulsar_url: str, values: dict[str, Any], index: int) -> Child:
        exe = shutil.which(comp.command, path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
        if exe is None:
            raise RuntimeError(f"command {comp.command!r} for component {comp.name} is not installed")
        broker_argv, broker_env = self.broker_args(pulsar_url)
        argv = [exe, *(self._fill(a, values) for a in comp.args), *broker_argv]
        # A component with a token of its own authenticates as its own role (docs/trust-model.md).
        if not self.rabbitmq and (token := self.token_file(comp.name)) is not None:
            argv += ["--pulsar-api-key-file", str(token)]
        for option in comp.options:
            flag = option.replace('_', '-')
            if isinstance(value := getattr(self.args, option, None), bool):
                argv.append(f"--{flag}" if value else f"--no-{flag}")
            elif value is not None:
                argv += [f"--{flag}", str(value)]
        where = self._fill(comp.listens, values) or "ready"
        if self.args.metrics:
            port = self._metrics_port(index)
            argv += ["--metrics-port", str(port), "--metrics-host", self.args.host]
            where += f" (metrics http://{self.local_host}:{port}/metrics)"
        else:
            argv += ["--no-metrics"]
        logs = self.data_dir / "logs"
        run = self.data_dir / "run"
        # Only the secrets this child needs (docs/security.md, "Limits, logs and secrets").
        env = {**child_environment(os.environ, (*BROKER_SECRETS, *comp.secrets)), **comp.env, **broker_env}
        # Where the components' states are: no call is refused as unserved while one is starting.
        env[STACK_STATUS_ENV] = str(values.get("stack_status") or "")
        return Child(comp, argv, env, logs / f"{comp.name}.log",
                     run / f"{comp.name}.ready", self.args.verbose, where=where)

    async def run(self) -> int:
        """Take the data directory, run the stack until told to stop, give the directory back."""
        if self.args.model:
            # Before anything starts: a wrong path is one line, not an LLM that keeps dying.
            from trustgraph.model.text_completion.gguf import model_file_problem

            from .models import FetchError, resolve, use_judge
            try:
                self.args.model = resolve(self.args.model)   # a known model's name: its fetched file
            except FetchError as e:
                print(f"tg-launch: error: {e}", file=sys.stderr, flush=True)
                return 1
            use_judge(self.args)
            if (problem := model_file_problem(self.args.model)) is not None:
                print(f"tg-launch: error: {problem}", file=sys.stderr, flush=True)
                return 1
            self.args.model = str(Path(self.args.model).absolute())   # a link keeps its name
        try:
            self.run_files.acquire(gateway=self.gateway_url())
        except AlreadyRunning as e:
            print(f"tg-launch: error: {e}", file=sys.stderr, flush=True)
            return 1
        try:
            if (problem := self.gateway_port_problem()) is not None:
                print(f"tg-launch: error: {problem}", file=sys.stderr, flush=True)
                return 1
            return await self._run()
        finally:
            self.run_files.release()

    async def _external_broker(self, url: str) -> None:
        """An existing Pulsar must be there before anything starts: one line if not."""
        try:
            problem = await probe(parse_broker_url(url))
        except BrokerUrlError as e:
            raise RuntimeError(str(e)) from None
        if problem is not None:
            raise RuntimeError(f"cannot reach the broker at {url}: {problem}; check --pulsar-host, "
                               f"or leave it out to run the embedded broker")

    def rabbitmq_pubsub(self) -> PubSub:
        """tg-launch's own PubSub on the stack's RabbitMQ (the bootstrap), declaring what the
        processors' wire (``$TRUSTGRAPH_WIRE``, which they inherit) declares."""
        wire = wire_for(os.environ.get(WIRE_ENV) or "2.1")
        return PubSub(amqp_url(vars(self.args)), processor="tg-launch",
                      transport=rabbitmq_transport(vars(self.args), wire.rabbitmq_topology(), "tg-launch"))

    async def _external_rabbitmq(self) -> str:
        """The user's RabbitMQ must be there, and take our user, before anything starts: one line if not."""
        url = amqp_url(vars(self.args))
        problem = await rabbitmq_problem(vars(self.args), "tg-launch probe")
        if problem is not None:
            raise RuntimeError(problem)
        return url

    def status_width(self) -> int:
        """How wide the status lines' name column is: as wide as the longest name they show."""
        names = ["broker", "bootstrap", *(c.name for c in self.selected())]
        if self.args.announced_tools is not None:
            names.append("announced tools")
        return max(STATUS_WIDTH, *map(len, names))

    def say(self, name: str, where: str) -> None:
        """A status line, its name in the column the supervisor's restart lines use too."""
        say(name, where, self.supervisor.width)

    def _stop(self, why: str) -> None:
        """A stop asked for (a signal, or make interrupted): the first reason is the one told."""
        if not self.stop_event.is_set():
            self.stop_reason = why
            self.stop_event.set()

    async def _run(self) -> int:
        (self.data_dir / "logs").mkdir(parents=True, exist_ok=True)
        (self.data_dir / "run").mkdir(parents=True, exist_ok=True)
        loop = asyncio.get_running_loop()
        # SIGHUP (the terminal closed) stops the stack as SIGTERM does; whatever else ends
        # tg-launch, SIGKILL included, ends its children too (processes.die_with_parent).
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            loop.add_signal_handler(sig, self._stop, sig.name)
        # GNU make keeps a SIGINT sent to its own pid (a script's `kill -INT`) to itself.
        watch = asyncio.ensure_future(watch_make(make, self._stop)) if (make := make_parent()) else None
        print(f"tg-launch: data in {self.data_dir}", flush=True)
        starting = asyncio.ensure_future(self._start())
        try:
            stopped = asyncio.ensure_future(self.stop_event.wait())
            await asyncio.wait({starting, stopped}, return_when=asyncio.FIRST_COMPLETED)
            stopped.cancel()
            if not starting.done():   # a stop asked for, or an essential process given up on
                starting.cancel()
                with contextlib.suppress(asyncio.CancelledError, *_START_ERRORS):
                    await starting
                return self._stopped_while_starting()
            starting.result()
            print("tg-launch: all components ready; Ctrl-C stops them", flush=True)
            await self.stop_event.wait()
            return 1 if self.supervisor.failed else 0
        except _START_ERRORS as e:
            if self.stop_event.is_set():   # a child the same Ctrl-C reached died first
                return self._stopped_while_starting()
            print(f"tg-launch: error: {e}", file=sys.stderr, flush=True)
            return 1
        finally:
            if watch is not None:
                watch.cancel()
            await self.shutdown()

    def _stopped_while_starting(self) -> int:
        """A stop asked for during start-up is no failure: one line, and exit status 0."""
        if self.supervisor.failed:   # the give-up line has said why
            return 1
        print(f"tg-launch: stopping ({self.stop_reason}) before all components were ready", flush=True)
        self.stopping_said = True
        return 0

    async def _start(self) -> None:
        """The broker, config-svc and the bootstrap, then every other component, each once ready."""
        args = self.args
        self.supervisor.width = self.status_width()
        admin_url = ""
        if self.rabbitmq:
            # No consumer counts on RabbitMQ (a request nobody consumes comes back instead): the
            # processors get no --pulsar-admin-url, and hand-started ones find no Pulsar recorded.
            self._say_exposure()
            where = await self._external_rabbitmq()
            self.say("broker", f"{where} (RabbitMQ, user {args.rabbitmq_username}, external)")
            pulsar_url = ""   # no Pulsar; the children get the --rabbitmq-* flags
            # Recorded (never the password) so a processor started by hand joins this stack.
            password_file = Path(args.rabbitmq_password_file).absolute() if args.rabbitmq_password_file else ""
            self.run_files.set_rabbitmq({"host": args.rabbitmq_host, "port": str(args.rabbitmq_port),
                                         "username": args.rabbitmq_username, "vhost": args.rabbitmq_vhost,
                                         "password-file": str(password_file)})
        elif args.pulsar_host:
            pulsar_url = args.pulsar_host
            self._say_exposure()
            await self._external_broker(pulsar_url)
            self.say("broker", f"{pulsar_url} (external)")
        else:
            port = args.broker_port
            if port_taken(args.broker_host, port):
                port = None  # 6650 is taken: the broker picks any free port (and another if that goes)
            self.broker = EmbeddedBroker(self.data_dir / "broker", port=port, host=args.broker_host,
                                         log_path=self.data_dir / "logs" / "broker.log")
            self._say_exposure(self.broker.port, self.broker.metrics_port)
            broker = BrokerProcess(self.broker)
            self.supervisor.note(broker, "starting")
            await broker.come_up()
            pulsar_url, admin_url = self.broker.url, self.broker.admin_url
            self.say(broker.name, broker.where)
            self.supervisor.watch(broker)
        if not self.rabbitmq:
            self.run_files.set_pulsar_url(pulsar_url, admin_url)
        shown = "localhost" if args.host == "127.0.0.1" else args.host
        mcp_host = self.exposure().mcp_host
        values = {
            "mcp_port": self.mcp_port,
            "data_dir": str(self.data_dir), "gateway_port": args.gateway_port,
            "host": args.host, "gateway_host": shown, "pulsar_admin_url": admin_url,
            "mcp_host": mcp_host, "mcp_shown": "localhost" if mcp_host == "127.0.0.1" else mcp_host,
            "openai_url": redact_url(os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1")),
            "llm_script": args.llm_script or "",
            "llm_model": Path(args.model).name if args.model else DEFAULT_MODEL,
            "stack_status": str(self.run_files.components_path),
            "approval_key": str(approval_key(self.data_dir)),
        }
        comps = self.selected()
        for i, comp in enumerate(comps):
            self.children.append(self._child(comp, pulsar_url, values, i + 1))
            self.supervisor.note(self.children[-1], "starting")
        first = [c for c in self.children if c.comp.name == FIRST]
        rest = [c for c in self.children if c.comp.name != FIRST]
        for child in first:
            await child.start()
            await child.wait_ready()
            self.say(child.name, child.where)
            self.supervisor.watch(child)
            if not args.no_bootstrap:
                path = Path(args.bootstrap) if args.bootstrap else default_bootstrap()
                if path is None:
                    print("tg-launch: no bootstrap file found (config-examples/bootstrap.json); "
                          "starting with an empty config", flush=True)
                elif (kept := await bootstrap(pulsar_url, path, api_key=self.own_token(),
                                              connect=self.rabbitmq_pubsub if self.rabbitmq else None)) == 0:
                    self.say("bootstrap", f"loaded {path}")
                else:
                    self.say("bootstrap", f"skipped: the config store already holds config (version "
                                          f"{kept}), which is kept; the bootstrap loads only into an "
                                          f"empty store")
            if args.announced_tools is not None:
                await put_config(pulsar_url, [ConfigValue(type="tool-policy", key="announced",
                                                          value=args.announced_tools)],
                                 api_key=self.own_token(), connect=self.rabbitmq_pubsub if self.rabbitmq else None)
                self.say("announced tools", f"tool-policy/announced = {args.announced_tools}")
        for child in rest:
            await child.start()
        for child in rest:
            await child.wait_ready()
            self.say(child.name, child.where)
            self.supervisor.watch(child)

    async def shutdown(self) -> None:
        await self.supervisor.close()
        if self.children and not self.stopping_said:
            print("tg-launch: stopping", flush=True)
        # Everything but config-svc first, config-svc last, then the broker.
        rest = [c for c in self.children if c.comp.name != FIRST]
        await asyncio.gather(*(c.stop() for c in rest), return_exceptions=True)
        await asyncio.gather(*(c.stop() for c in self.children if c.comp.name == FIRST),
                             return_exceptions=True)
        if self.broker is not None:
            await asyncio.to_thread(self.broker.stop)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line.  Hidden flags, for tests only (never needed in use):

    ``--extra-components FILE``
        component definitions (JSON, see ``components.load_components``) added
        to the table, replacing components of the same name;
    ``--max-restarts N``, ``--backoff SECONDS``, ``--stable-after SECONDS``
        the restart policy (``supervisor.RestartPolicy``; defaults 5, 2 s and
        10 s), so a test sees a give-up or a reset in seconds.
    """
    names = sorted({c.name for c in COMPONENTS})
    p = argparse.ArgumentParser(prog="tg-launch", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data-dir", default=os.environ.get("TRUSTGRAPH_DATA", ".trustgraph"),
                   help="broker data, config store, logs (default ./.trustgraph or $TRUSTGRAPH_DATA)")
    p.add_argument("-p", "--pulsar-host", default=None,
                   help="use this Pulsar (e.g. pulsar://pulsar:6650) instead of starting the embedded broker")
    add_backend_args(p)
    p.add_argument("--broker-port", type=int, default=6650,
                   help="port of the embedded broker (a free one is used if it is taken)")
    p.add_argument("--gateway-port", type=int, default=8088)
    p.add_argument("--mcp-port", type=int, default=8089,
                   help="port of mcp-server, our tools for MCP clients (a free one is used if it is taken)")
    p.add_argument("--host", default="127.0.0.1",
                   help="address the gateway, mcp-server and the metrics servers listen on "
                        "(default %(default)s: this machine only; 0.0.0.0 exposes them to the network, "
                        "so set GATEWAY_SECRET too: mcp-server stays local without a token)")
    p.add_argument("--broker-host", default="127.0.0.1",
                   help="address the embedded broker and its metrics listen on (default %(default)s; "
                        "pulsar-lite has no authentication: anything that reaches it reads and sends "
                        "every message)")
    p.add_argument("--llm", choices=["embedded", "openai", "scripted"], default=None,
                   help="LLM service: embedded SmolLM2 (default), openai (default when OPENAI_BASE_URL "
                        "or OPENAI_TOKEN is set), or scripted (a test stand-in; needs --llm-script)")
    p.add_argument("--llm-script", default=None, help="rules file for --llm scripted")
    p.add_argument("--model", default=None, metavar="PATH",
                   help="a local GGUF model file for the embedded LLM to run instead of SmolLM2-135M-Instruct, "
                        "or the name of a model tg-fetch-model fetched (qwen2.5-coder-1.5b) (implies --llm "
                        "embedded)")
    p.add_argument("--max-iterations", type=int, default=None,
                   help="the agent's limit of steps per dialog (agent-manager-react's default: 10)")
    p.add_argument("--tool-timeout", type=float, default=None,
                   help="seconds the agent waits for one tool call (agent-manager-react's default: 60)")
    p.add_argument("--announced-tools", type=announced_tools, default=None, metavar="POLICY",
                   help="which tools announced by running services the agent, gateway and mcp-server use: "
                        "all, configured (only services with a tool-service config item) or service ids "
                        "separated by commas; written to config tool-policy/announced at start (without "
                        "it, the stored setting stays; none stored means all)")
    p.add_argument("--pulsar-token-dir", default=None, metavar="DIR",
                   help="Pulsar tokens, one per component: DIR/<component>.token (e.g. config-svc.token, "
                        "joke-service.token; tg-launch.token for tg-launch itself), so each authenticates "
                        "as its own role; components without a file use $PULSAR_API_KEY")
    p.add_argument("--min-confidence", type=float, default=None,
                   help="the share of the model's probability its chosen tool needs among the tools, "
                        "or the agent asks back (agent-manager-react's default: 0.2; 0 takes every choice)")
    p.add_argument("--tie-ratio", type=float, default=None,
                   help="the agent asks back when the next likeliest tool has at least this share of the "
                        "chosen one's probability (agent-manager-react's default: 0.8; 0 turns it off)")
    p.add_argument("--ranker-lead", type=float, default=None,
                   help="how much nearer the question (cosine similarity) the ranker's first tool must be "
                        "than its second to be called in place of an unsure model's choice "
                        "(agent-manager-react's default: 0.05; 0 leaves the choice to the model's share)")
    p.add_argument("--model-sure", type=float, default=None,
                   help="the model's share of its chosen tool at which the ranker does not overrule it "
                        "(agent-manager-react's default: 0.7)")
    p.add_argument("--argument-check", action=argparse.BooleanOptionalAction, default=None,
                   help="whether the agent asks back when the model gives a tool an argument value the "
                        "dialog never said (agent-manager-react's default: on)")
    p.add_argument("--bootstrap", default=None, help="bootstrap file (default config-examples/bootstrap.json)")
    p.add_argument("--no-bootstrap", action="store_true", help="do not load bootstrap config")
    p.add_argument("--metrics", action=argparse.BooleanOptionalAction, default=False,
                   help="serve Prometheus metrics from each child, each on a free port (shown)")
    p.add_argument("--metrics-base-port", type=int, default=None,
                   help="with --metrics: ports from this one up, in component order")
    p.add_argument("-v", "--verbose", action="store_true", help="show every child's output live")
    p.add_argument("--extra-components", default=None, help=argparse.SUPPRESS)
    p.add_argument("--max-restarts", type=int, default=RestartPolicy.max_restarts, help=argparse.SUPPRESS)
    p.add_argument("--backoff", type=float, default=RestartPolicy.backoff, help=argparse.SUPPRESS)
    p.add_argument("--stable-after", type=float, default=RestartPolicy.stable_after, help=argparse.SUPPRESS)
    for name in names:
        p.add_argument(f"--no-{name}", dest="no", action="append_const", const=name,
                       help=f"do not start {name}")
    args = p.parse_args(argv)
    if args.llm == "scripted" and not args.llm_script:
        p.error("--llm scripted needs --llm-script FILE")
    if args.model and args.llm not in (None, "embedded"):
        p.error(f"--model is a GGUF file for the embedded LLM; --llm {args.llm} does not run it")
    if args.pubsub_backend == "rabbitmq":
        if args.pulsar_host or args.pulsar_token_dir:
            p.error("--pulsar-host and --pulsar-token-dir name a Pulsar; with --pubsub-backend rabbitmq give "
                    "--rabbitmq-host, --rabbitmq-port, --rabbitmq-username and --rabbitmq-password-file")
        try:
            rabbitmq_password(vars(args))   # a bad file: one line now, not in every child's log
        except TokenFileError as e:
            p.error(str(e))
    return args


def run(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    logsafe.configure(logging.INFO if args.verbose else logging.WARNING,
                      "%(asctime)s %(levelname)s %(name)s: %(message)s")
    sys.exit(asyncio.run(Launcher(args).run()))
