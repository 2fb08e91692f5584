"""tg-launch: run the whole stack on one machine with one command.

Starts the embedded pulsar-lite broker on 127.0.0.1 (unless --pulsar-host
points at an existing Pulsar), then config-svc, loads the bootstrap config
into an empty store, then the other processors, each as a child process with
its output in ``<data-dir>/logs/<name>.log``.  Ctrl-C or SIGTERM stops every
child and then the broker.  A child that dies is restarted with a back-off.
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import logging
import os
import shutil
import signal
import sys
import time
from pathlib import Path
from typing import Any

from trustgraph.base.broker import BrokerError, EmbeddedBroker, free_port, wait_for_port

from .bootstrap import BootstrapError, bootstrap
from .components import COMPONENTS, FIRST, Component, choose_llm

logger = logging.getLogger("tg-launch")

READY_TIMEOUT = 90.0
MAX_RESTARTS = 5


def _die_with_parent() -> None:
    """Ask Linux to SIGTERM the child if tg-launch itself dies, so nothing is orphaned."""
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def default_bootstrap() -> Path | None:
    """config-examples/bootstrap.json in the working directory or in this checkout."""
    here = Path(__file__).resolve()
    for base in (Path.cwd(), *here.parents):
        candidate = base / "config-examples" / "bootstrap.json"
        if candidate.is_file():
            return candidate
    return None


class Child:
    """One supervised processor."""

    def __init__(self, comp: Component, argv: list[str], env: dict[str, str],
                 log_path: Path, ready_path: Path, verbose: bool) -> None:
        self.comp = comp
        self.argv = argv
        self.env = env
        self.log_path = log_path
        self.ready_path = ready_path
        self.verbose = verbose
        self.proc: asyncio.subprocess.Process | None = None
        self.restarts = 0
        self.stopping = False
        self._pump: asyncio.Task | None = None

    async def start(self) -> None:
        self.ready_path.unlink(missing_ok=True)
        self.proc = await asyncio.create_subprocess_exec(
            *self.argv, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            # Ready means serving: processors that follow config report ready
            # only once the first config (and so their flows) is in place.
            env={**self.env, "TG_READY_FILE": str(self.ready_path), "TG_READY_AFTER_CONFIG": "1"},
            preexec_fn=_die_with_parent,
        )
        self._pump = asyncio.create_task(self._copy_output(self.proc))

    async def _copy_output(self, proc: asyncio.subprocess.Process) -> None:
        with open(self.log_path, "ab") as log:
            while True:
                line = await proc.stdout.readline()
                if not line:
                    break
                log.write(line)
                log.flush()
                if self.verbose:
                    sys.stdout.write(f"[{self.comp.name}] {line.decode(errors='replace')}")
                    sys.stdout.flush()

    async def wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not self.ready_path.exists():
            if self.proc.returncode is not None:
                raise RuntimeError(f"{self.comp.name} exited with code {self.proc.returncode}; "
                                   f"see {self.log_path}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.comp.name} not ready after {timeout:.0f}s; see {self.log_path}")
            await asyncio.sleep(0.05)

    async def stop(self, timeout: float = 10.0) -> None:
        self.stopping = True
        proc = self.proc
        if proc is None or proc.returncode is not None:
            return
        try:
            proc.terminate()
            await asyncio.wait_for(proc.wait(), timeout)
        except ProcessLookupError:
            pass
        except TimeoutError:
            logger.warning("%s did not stop in %.0fs; killing it", self.comp.name, timeout)
            proc.kill()
            await proc.wait()
        if self._pump is not None:
            await asyncio.wait([self._pump], timeout=2)


class Launcher:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.data_dir = Path(args.data_dir).resolve()
        self.broker: EmbeddedBroker | None = None
        self.children: list[Child] = []
        self.stop_event = asyncio.Event()

    def selected(self) -> list[Component]:
        llm = choose_llm(self.args.llm)
        skip = set(self.args.no or [])
        out = []
        for comp in COMPONENTS:
            if comp.name in skip or (comp.llm is not None and comp.llm != llm):
                continue
            out.append(comp)
        return out

    def _fill(self, text: str, values: dict[str, Any]) -> str:
        return text.format(**values)

    def _child(self, comp: Component, pulsar_url: str, values: dict[str, Any], index: int) -> Child:
        exe = shutil.which(comp.command, path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
        if exe is None:
            raise RuntimeError(f"command {comp.command!r} for component {comp.name} is not installed")
        argv = [exe, *(self._fill(a, values) for a in comp.args), "--pulsar-host", pulsar_url]
        if self.args.metrics:
            argv += ["--metrics-port", str(self.args.metrics_base_port + index)]
        else:
            argv += ["--no-metrics"]
        logs = self.data_dir / "logs"
        run = self.data_dir / "run"
        return Child(comp, argv, {**os.environ, **comp.env}, logs / f"{comp.name}.log",
                     run / f"{comp.name}.ready", self.args.verbose)

    def say(self, name: str, where: str) -> None:
        print(f"  {name:<14} {where}", flush=True)

    async def run(self) -> int:
        args = self.args
        (self.data_dir / "logs").mkdir(parents=True, exist_ok=True)
        (self.data_dir / "run").mkdir(parents=True, exist_ok=True)
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, self.stop_event.set)
        print(f"tg-launch: data in {self.data_dir}", flush=True)
        try:
            if args.pulsar_host:
                pulsar_url = args.pulsar_host
                self.say("broker", f"{pulsar_url} (external)")
            else:
                port = args.broker_port
                try:
                    wait_for_port("127.0.0.1", port, 0.1)
                    port = free_port()  # 6650 is taken: pick any free port
                except BrokerError:
                    pass
                self.broker = EmbeddedBroker(self.data_dir / "broker", port=port,
                                             log_path=self.data_dir / "logs" / "broker.log")
                await asyncio.to_thread(self.broker.start)
                pulsar_url = self.broker.url
                self.say("broker", f"{pulsar_url} (pulsar-lite, data {self.data_dir / 'broker'})")
            (self.data_dir / "pulsar-url").write_text(pulsar_url + "\n")
            values = {
                "data_dir": str(self.data_dir), "gateway_port": args.gateway_port,
                "openai_url": os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1"),
                "llm_script": args.llm_script or "",
            }
            comps = self.selected()
            for i, comp in enumerate(comps):
                self.children.append(self._child(comp, pulsar_url, values, i + 1))
            first = [c for c in self.children if c.comp.name == FIRST]
            rest = [c for c in self.children if c.comp.name != FIRST]
            for child in first:
                await child.start()
                await child.wait_ready(READY_TIMEOUT)
                self.say(child.comp.name, self._fill(child.comp.listens, values) or "ready")
                if not args.no_bootstrap:
                    path = Path(args.bootstrap) if args.bootstrap else default_bootstrap()
                    if path is None:
                        print("tg-launch: no bootstrap file found (config-examples/bootstrap.json); "
                              "starting with an empty config", flush=True)
                    elif await bootstrap(pulsar_url, path):
                        self.say("bootstrap", f"loaded {path}")
            for child in rest:
                await child.start()
            for child in rest:
                await child.wait_ready(READY_TIMEOUT)
                self.say(child.comp.name, self._fill(child.comp.listens, values) or "ready")
            print("tg-launch: all components ready; Ctrl-C stops them", flush=True)
            await self.supervise()
            return 0
        except (RuntimeError, BootstrapError, BrokerError) as e:
            print(f"tg-launch: error: {e}", file=sys.stderr, flush=True)
            return 1
        finally:
            await self.shutdown()

    async def supervise(self) -> None:
        """Wait for a stop signal; restart children that die, with a back-off."""
        while not self.stop_event.is_set():
            try:
                await asyncio.wait_for(self.stop_event.wait(), 0.5)
            except TimeoutError:
                pass
            for child in self.children:
                rc = child.proc.returncode if child.proc else None
                if rc is None or child.stopping or self.stop_event.is_set():
                    continue
                if child.restarts >= MAX_RESTARTS:
                    continue
                child.restarts += 1
                delay = min(2 ** child.restarts, 30)
                print(f"tg-launch: {child.comp.name} exited with code {rc}; restart {child.restarts}/"
                      f"{MAX_RESTARTS} in {delay}s (log {child.log_path})", flush=True)
                await asyncio.sleep(delay)
                if not self.stop_event.is_set():
                    await child.start()

    async def shutdown(self) -> None:
        if self.children:
            print("tg-launch: stopping", flush=True)
        # Everything but config-svc first, config-svc last, then the broker.
        rest = [c for c in self.children if c.comp.name != FIRST]
        await asyncio.gather(*(c.stop() for c in rest), return_exceptions=True)
        await asyncio.gather(*(c.stop() for c in self.children if c.comp.name == FIRST),
                             return_exceptions=True)
        if self.broker is not None:
            await asyncio.to_thread(self.broker.stop)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    names = sorted({c.name for c in COMPONENTS})
    p = argparse.ArgumentParser(prog="tg-launch", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data-dir", default=os.environ.get("TRUSTGRAPH_DATA", ".trustgraph"),
                   help="broker data, config store, logs (default ./.trustgraph or $TRUSTGRAPH_DATA)")
    p.add_argument("-p", "--pulsar-host", default=None,
                   help="use this Pulsar (e.g. pulsar://pulsar:6650) instead of starting the embedded broker")
    p.add_argument("--broker-port", type=int, default=6650,
                   help="port of the embedded broker (a free one is used if it is taken)")
    p.add_argument("--gateway-port", type=int, default=8088)
    p.add_argument("--llm", choices=["embedded", "openai", "scripted"], default=None,
                   help="LLM service: embedded SmolLM2 (default), openai (default when OPENAI_BASE_URL "
                        "or OPENAI_TOKEN is set), or scripted (a test stand-in; needs --llm-script)")
    p.add_argument("--llm-script", default=None, help="rules file for --llm scripted")
    p.add_argument("--bootstrap", default=None, help="bootstrap file (default config-examples/bootstrap.json)")
    p.add_argument("--no-bootstrap", action="store_true", help="do not load bootstrap config")
    p.add_argument("--metrics", action=argparse.BooleanOptionalAction, default=False,
                   help="serve Prometheus metrics from each child (ports from --metrics-base-port)")
    p.add_argument("--metrics-base-port", type=int, default=8001)
    p.add_argument("-v", "--verbose", action="store_true", help="show every child's output live")
    for name in names:
        p.add_argument(f"--no-{name}", dest="no", action="append_const", const=name,
                       help=f"do not start {name}")
    args = p.parse_args(argv)
    if args.llm == "scripted" and not args.llm_script:
        p.error("--llm scripted needs --llm-script FILE")
    return args


def run(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    sys.exit(asyncio.run(Launcher(args).run()))
