"""``capdesk batch --ray``: the describing step of a batch spread over a Ray cluster.

Only describing moves: it is what costs (decoding the picture, the encoder, the beam search),
and it needs nothing but the picture. Listing, the skip check, writing the sidecars, the ledger
and the report stay in the one process that started the batch (``batch.run_batch``), so the
never-overwrite-a-person's-words rule, resume and the report are exactly those of a plain
batch, and the sidecars are byte-identical to its.

The pictures go to Ray Data in the chunks a plain batch would encode together (the encoder sees
the same batches, so it gives the same numbers); each chunk is described by an actor holding
the model in ONNX Runtime, loaded once per actor. The actors get the model bundles from the
object store, not from their own disks: every node describes with exactly the models (and
routing between them) that the machine starting the batch chose, whatever it has installed.
Pictures are read by the actors, by path, so a cluster needs the pictures on a file system every
node mounts at the same path.

A Ray that CapDesk starts on this machine (``PrivateRay``) is for this user only: every port it
opens listens on the loopback address, its gRPC calls need a token of its own (a 0600 file in
CapDesk's state folder, never ``~/.ray/auth_token``), its session folder (logs, sockets) is a
0700 folder of its own, and the token and the folder are removed when the batch ends. A cluster
the user names (``--ray ADDRESS``) is used as it is set up: docs/scale-out.md says how to set
one up safely.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import pickle
import re
import secrets
import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from capdesk.describe.describer import Described, DescribeOptions, Describer
from capdesk.folders.reading import describe_paths
from capdesk.model.bundle import Bundle, open_bundle
from capdesk.status import failure_line

RAY_MISSING = "Ray is not installed: pip install 'capdesk[ray]'"
# Where a chunk is no longer worth its own Ray block: past this, chunks share blocks, so that the
# per-block bookkeeping of a million-picture batch stays small next to the describing.
MAX_BLOCKS = 10_000
# Ray Data's own threads (its executor, the threads that fetch blocks for ``iter_rows``) can still be
# finishing after the rows are closed. One that touches Ray after ``ray.shutdown()`` ends the whole process
# at once with status 1 (Ray's core worker "has already been shutdown ... The process will exit"): a Ctrl+C
# then exited 1, not 130. They are waited for before Ray is stopped, this long at most. (Its "Prefetcher"
# thread is not: it stays, idle, for the life of the process.)
RAY_DATA_THREADS = ("StreamingExecutor", "iter_threaded", "ray-data-metadata-prefetch")
RAY_DATA_WAIT_S = 10.0


class RaySetupError(Exception):
    """Ray cannot be used as asked; ``str()`` says why in one line."""


@dataclass
class RayPlan:
    address: str | None = None  # None: a Ray on this machine, started for this batch and stopped after
    workers: int | None = None  # None: one per CPU (or per GPU share) the cluster has
    gpus: float = 0.0  # GPUs each worker holds; more than 0 runs the models on CUDA
    provider: str | None = None  # the workers' ONNX Runtime provider (default: cuda with GPUs, else the best)


def bundle_payload(bundle: Bundle) -> dict:
    """A bundle as bytes for the object store: its manifest and every file it lists, each checked
    against its sha256 on the way out (and again by the worker that loads it)."""
    return {"name": bundle.name, "manifest": json.dumps(bundle.manifest).encode("utf-8"),
            "files": {fn: bundle.read_verified(fn) for fn in bundle.manifest["files"]}}


def unpack_payload(payload: dict, into: Path) -> Bundle:
    folder = into / payload["name"]
    folder.mkdir(parents=True)
    (folder / "manifest.json").write_bytes(payload["manifest"])
    for fn, data in payload["files"].items():
        target = folder / fn
        if target.parent != folder:  # a bundle's files all sit in its folder (the manifest schema says so)
            raise ValueError(f"{payload['name']}: file name {fn!r} leaves its folder")
        target.write_bytes(data)
    return open_bundle(folder, source="ray")


@dataclass(frozen=True)
class WorkerSpec:
    """How every worker builds its describer: as the describer of the machine starting the batch was
    built (its beam, its options, whether its model was named), on the workers' provider."""

    provider: str | None
    beam: int | None  # None: each model's own tuned width
    options: DescribeOptions
    fixed: bool
    threads: int = 1

    @classmethod
    def of(cls, describer: Describer, plan: RayPlan) -> WorkerSpec:
        return cls(plan.provider or ("cuda" if plan.gpus > 0 else None), describer.beam, describer.options,
                   describer.fixed)


class DescribeWorker:
    """A Ray actor: the models loaded once, then one chunk of pictures described per call."""

    def __init__(self, payload_ref: list, spec: WorkerSpec) -> None:
        import ray

        payload = ray.get(payload_ref[0])
        tmp = Path(tempfile.mkdtemp(prefix="capdesk-ray-"))
        try:
            bundles = [unpack_payload(p, tmp) for p in payload]
            # ONNX Runtime and the bundle readers keep what they need in memory: the files can go.
            self.describer = Describer(bundles[0], provider=spec.provider, beam=spec.beam, options=spec.options,
                                       threads=spec.threads, others=bundles[1:], fixed=spec.fixed)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def __call__(self, batch: dict) -> dict:
        out = []
        for raw in batch["chunk"]:
            paths = [os.fsdecode(p) for p in pickle.loads(raw)]
            try:
                done = list(describe_paths(self.describer, paths, batch_size=len(paths)))
            except Exception as exc:  # one bad chunk is reported, never the end of the batch
                why = f"the Ray worker failed ({failure_line(exc)})"
                done = [Described(p, model=self.describer.name, error=why) for p in paths]
            out.append(pickle.dumps(done, protocol=pickle.HIGHEST_PROTOCOL))
        return {"described": out}


def _import_ray():
    # Ray sends usage statistics home unless told not to; CapDesk opens no connection to the internet.
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    try:
        import ray
        import ray.data  # noqa: F401
    except ImportError:
        raise RaySetupError(RAY_MISSING) from None
    return ray


def reachable(address: str, timeout: float = 5.0) -> str | None:
    """None when something answers at a HOST:PORT (or ray://HOST:PORT) address, else why not.
    Ray itself waits minutes for a head node that is not there; a person should hear at once."""
    hostport = address.removeprefix("ray://")
    host, sep, port = hostport.rpartition(":")
    if not sep or not port.isdigit():
        return None  # 'auto' and the like: Ray finds the cluster itself, and says quickly when there is none
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout):
            return None
    except OSError as exc:
        why = exc.strerror or type(exc).__name__
        return f"nothing answers at {hostport} ({why}); is 'ray start --head' running there?"


@contextlib.contextmanager
def _no_cloud_probes(ray) -> Iterator[None]:
    """While a local Ray starts: HTTP through a proxy that is not there, except to this machine.

    Ray's head process asks the cloud metadata services which cloud it runs on (an HTTP request to
    169.254.169.254, a DNS lookup of metadata.google.internal) even with usage statistics off: its
    usage module gathers that before it reads the opt-out. Ray's processes take their environment
    when they start, so those requests fail on this machine; Ray's own traffic, all to this
    machine's addresses, bypasses the proxy. The environment is put back at once."""
    names = ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "no_proxy", "NO_PROXY")
    saved = {n: os.environ.get(n) for n in names}
    try:
        local = ",".join(dict.fromkeys(["localhost", "127.0.0.1", "::1", ray.util.get_node_ip_address()]))
    except Exception:  # no address to find: Ray will use loopback, which is in the list anyway
        local = "localhost,127.0.0.1,::1"
    try:
        for n in names[:4]:
            os.environ[n] = "http://127.0.0.1:9"  # the discard port: refused at once
        os.environ["no_proxy"] = os.environ["NO_PROXY"] = local
        yield
    finally:
        for n, v in saved.items():
            if v is None:
                os.environ.pop(n, None)
            else:
                os.environ[n] = v


def ray_state_dir() -> Path:
    """Where the token of a Ray that CapDesk starts is kept while it runs: CapDesk's state folder."""
    import platformdirs

    return Path(platformdirs.user_state_dir("capdesk", appauthor=False)) / "ray"


# Ray reads these when it starts, and hands them to every process it starts.
AUTH_MODE, AUTH_TOKEN_PATH = "RAY_AUTH_MODE", "RAY_AUTH_TOKEN_PATH"
# Off, Ray takes the loopback address as this machine's (as it does on macOS and Windows, where it
# runs one machine only); on, it takes the address of the network route and listens on every interface.
CLUSTER_SWITCH = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"


_LEFT_BEHIND = re.compile(r"(?:token|capdesk-ray)-(\d+)-.+")


def _sweep_dead(*found) -> None:
    """Tokens and session folders left by a batch that was killed (``-PID-`` in their names): a dead
    process's token must not lie about, nor its folders fill the disk."""
    for paths in found:
        for p in paths:
            m = _LEFT_BEHIND.fullmatch(p.name)
            if m is None or int(m.group(1)) == os.getpid() or _alive(int(m.group(1))):
                continue
            with contextlib.suppress(OSError):
                if p.is_symlink() or p.stat().st_uid != os.getuid():
                    continue
                if p.is_dir():
                    shutil.rmtree(p, ignore_errors=True)
                else:
                    os.unlink(p)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: alive, and not ours to judge
        return True
    return True


class PrivateRay:
    """What a Ray started on this machine for one batch runs with, made before it starts and undone
    after it stops (``close``): the loopback address only, a token of its own (0600, in CapDesk's
    state folder), and a session folder of its own (0700). Ray's processes take their environment
    when they start, so the environment is put back once Ray has stopped."""

    def __init__(self) -> None:
        self.token_path: Path | None = None
        self.temp_dir: Path | None = None
        self._env: dict[str, str | None] = {}
        self._constants: tuple[object, bool] | None = None

    def start(self, ray) -> dict:
        """Set everything up; the keyword arguments for ``ray.init``."""
        folder = ray_state_dir()
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(folder, 0o700)
        _sweep_dead(folder.glob("token-*"), Path(tempfile.gettempdir()).glob("capdesk-ray-*"))
        self.token_path = folder / f"token-{os.getpid()}-{secrets.token_hex(4)}"
        fd = os.open(self.token_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(secrets.token_hex(32))
        # Short, and the user's only: Ray's unix sockets live in it, whose paths have a length limit.
        self.temp_dir = Path(tempfile.mkdtemp(prefix=f"capdesk-ray-{os.getpid()}-"))
        for name, value in ((AUTH_MODE, "token"), (AUTH_TOKEN_PATH, str(self.token_path)), (CLUSTER_SWITCH, "0")):
            self._env[name] = os.environ.get(name)
            os.environ[name] = value
        self._refresh(ray, local_only=True)
        # Ray makes its own folder world-writable (0777): inside this one, no one else can reach it.
        return {"address": "local", "_node_ip_address": "127.0.0.1", "_temp_dir": str(self.temp_dir / "r"),
                "include_dashboard": False}

    def _refresh(self, ray, local_only: bool) -> None:
        """A Ray already imported in this process read its settings then: tell it again."""
        with contextlib.suppress(Exception):  # private to Ray: what it lacks, it reads when it starts
            from ray._private import ray_constants

            if self._constants is None:
                self._constants = (ray_constants, ray_constants.ENABLE_RAY_CLUSTER)
            ray_constants.ENABLE_RAY_CLUSTER = not local_only and self._constants[1]
        with contextlib.suppress(Exception):
            from ray._raylet import AuthenticationTokenLoader, Config

            Config.initialize("")
            AuthenticationTokenLoader.instance().reset_cache()

    def close(self) -> None:
        """After ``ray.shutdown()``: the token and the session folder go, the environment comes back."""
        for name, value in self._env.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        self._env = {}
        if self._constants is not None:
            module, value = self._constants
            with contextlib.suppress(Exception):
                module.ENABLE_RAY_CLUSTER = value  # type: ignore[attr-defined]
            self._constants = None
        if self.token_path is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.token_path)
            self.token_path = None
        if self.temp_dir is not None:
            shutil.rmtree(self.temp_dir, ignore_errors=True)
            self.temp_dir = None


def wait_for_ray_data_threads(timeout: float = RAY_DATA_WAIT_S) -> None:
    """Wait (``timeout`` at most, all together) for the threads Ray Data runs for a dataset to end."""
    end = time.monotonic() + timeout
    for t in threading.enumerate():
        if t is not threading.current_thread() and t.name.startswith(RAY_DATA_THREADS):
            t.join(max(0.0, end - time.monotonic()))


def connect(plan: RayPlan, private: PrivateRay | None = None) -> bool:
    """Join the cluster at ``plan.address``, or start a Ray on this machine, set up by ``private``
    (a fresh ``PrivateRay`` when None); True when this call started Ray (and so should stop it,
    then close ``private``)."""
    ray = _import_ray()
    if ray.is_initialized():
        return False
    # The CLI says what matters in its own words; Ray's own notes stay in its session's log files.
    quiet = {"log_to_driver": False, "logging_level": logging.ERROR}
    if plan.address and (why := reachable(plan.address)):
        raise RaySetupError(f"cannot reach the Ray cluster at {plan.address}: {why}")
    try:
        if plan.address:
            ray.init(address=plan.address, **quiet)
        else:
            private = private or PrivateRay()
            try:
                local = private.start(ray)
                with _no_cloud_probes(ray):
                    ray.init(**local, **quiet)
            except BaseException:
                with contextlib.suppress(Exception):
                    ray.shutdown()
                private.close()
                raise
    except Exception as exc:  # Ray raises ConnectionError, RuntimeError, ValueError ... by cause
        where = f"the Ray cluster at {plan.address}" if plan.address else "a local Ray"
        raise RaySetupError(f"cannot start or reach {where} ({failure_line(exc)})") from None
    for handler in logging.getLogger("ray.data").handlers:  # Ray Data logs every dataset's start and end
        if not isinstance(handler, logging.FileHandler):
            handler.setLevel(logging.ERROR)
    return True


def worker_count(plan: RayPlan, resources: dict) -> int:
    """How many actors the cluster can hold: as asked, and never more than its CPUs (or GPU shares)."""
    cpus = int(resources.get("CPU", 1))
    fit = cpus
    if plan.gpus > 0:
        fit = min(fit, int(resources.get("GPU", 0) / plan.gpus))
        if fit < 1:
            raise RaySetupError(f"the Ray cluster has {resources.get('GPU', 0):g} GPUs: none can give "
                                f"{plan.gpus:g} to a worker (--ray-gpus)")
    return max(1, min(plan.workers or fit, fit))


class RayRun:
    """Ray for one batch: ``start`` (joins or starts the cluster, ships the models), ``stream`` (the
    ``batch.DescribeStream`` to give ``run_batch``), ``close`` (stops a Ray that ``start`` started)."""

    def __init__(self, describer: Describer, plan: RayPlan, batch_size: int = 8) -> None:
        self.describer, self.plan, self.batch_size = describer, plan, batch_size
        self.workers = 0
        self._ours = False
        self._payload: list = []
        self.private = PrivateRay()  # how a Ray started here is set up, and undone by ``close``

    def start(self) -> str:
        """Ready the cluster; one line saying where the pictures will be described. RaySetupError
        (nothing started is left running) when Ray cannot be used as planned."""
        self._ours = connect(self.plan, self.private)
        try:
            import ray

            self.workers = worker_count(self.plan, ray.cluster_resources())
            # Wrapped in a list, so every actor receives the reference and fetches the models itself.
            self._payload = [ray.put([bundle_payload(e.bundle) for e in self.describer.engines.values()])]
        except BaseException:
            self.close()
            raise
        where = self.plan.address or "a local Ray"
        return f"describing on {where} with {self.workers} worker{'s' * (self.workers != 1)}"

    def stream(self, paths: list[str]) -> Iterator[Described]:
        import ray
        import ray.data

        done = 0
        try:
            ctx = ray.data.DataContext.get_current()
            ctx.execution_options.preserve_order = True  # rows come back in the batch's order
            ctx.enable_progress_bars = False  # the CLI draws its own
            chunks = [pickle.dumps([os.fsencode(p) for p in paths[i:i + self.batch_size]])
                      for i in range(0, len(paths), self.batch_size)]
            ds = ray.data.from_items([{"chunk": c} for c in chunks],
                                     override_num_blocks=min(len(chunks), MAX_BLOCKS))
            ds = ds.map_batches(
                DescribeWorker, batch_size=1, compute=ray.data.ActorPoolStrategy(size=self.workers),
                num_cpus=1, num_gpus=self.plan.gpus or None,
                fn_constructor_kwargs={"payload_ref": self._payload,
                                       "spec": WorkerSpec.of(self.describer, self.plan)})
            rows = iter(ds.iter_rows())
            try:
                for row in rows:
                    for d in pickle.loads(row["described"]):
                        done += 1
                        yield d
            finally:
                # Stops Ray Data's executor now (its threads wait on Ray), before ``close`` stops Ray.
                rows.close()
        # The cluster went away, a worker could not start ... (GeneratorExit, on cancel, passes through.)
        except Exception as exc:
            why = f"not described: the Ray job stopped ({failure_line(exc)})"
            for p in paths[done:]:
                yield Described(p, model=self.describer.name, error=why)

    def close(self) -> None:
        # Also when joining a cluster: Ray disconnects from it as Python exits, with the same race.
        wait_for_ray_data_threads()
        if self._ours:
            self._ours = False
            import ray

            with contextlib.suppress(Exception):
                ray.shutdown()
            self.private.close()  # after Ray's processes are gone: the token and the session folder go
