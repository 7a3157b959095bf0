"""Dask clusters: connecting to a scheduler, making the plugin importable on its workers, batch cases as tasks.

A cluster is a `dask scheduler` and `dask worker tcp://host:8786` processes on each machine, every
worker running a Python that has the plugin's dependencies (numpy < 2, rasterio, geopandas, scipy,
networkx, dask, distributed). The plugin's own package travels by path: the client registers a worker
plugin that puts the folder holding the package (this machine's, or the worker's LODESTAR_PLUGIN_PATH)
on the worker's sys.path, also on workers that join or restart later. Case folders and output folders
must be at the same paths on every machine (a shared file system).

`map_on_cluster` sends one task per item (plugin.runs.batch: one per case), keeps at most a few per worker
thread in flight (so a cancel stops submitting), hands back each result with the worker that ran it,
and survives a worker's death: the scheduler re-runs the task elsewhere once; a task whose second
worker dies too is given up (the batch records the case as failed with the reason). A cancel cancels
every submitted future at once.
"""
from __future__ import annotations

import os
import sys
import threading
import time
import uuid
from typing import Callable

from .errors import Cancelled, LodestarError
from .progress import SILENT, Progress

CONNECT_TIMEOUT_S = 10
POLL_S = 0.1
"""How often the client looks at its futures and at the cancel flag (a cancel takes effect within this), also while
it connects."""
IN_FLIGHT_PER_THREAD = 2
MAX_WORKERS_PER_TASK = 2
"""A task is started on at most this many workers: the first, and once more elsewhere after that one died."""
PATH_ENV = "LODESTAR_PLUGIN_PATH"


def package_location() -> tuple[str, str]:
    """(folder holding the plugin package, the package's import name) of this process: the folder name of the
    plugin differs by install (`lodestar` in QGIS), so workers import it under the name the client uses."""
    top = __name__.split(".")[0]
    module = sys.modules[top]
    assert module.__file__ is not None  # a regular package, imported from its folder
    return os.path.dirname(os.path.dirname(os.path.abspath(module.__file__))), top


def _path_plugin(folder: str, package: str):
    """A worker plugin that puts the plugin's folder on sys.path; its class is made here so that it travels by
    value (the worker cannot import this module before the plugin has run)."""
    from distributed.diagnostics.plugin import WorkerPlugin

    class LodestarPath(WorkerPlugin):
        name = "lodestar-path"

        def __init__(self, folder, package):
            self.folder = folder
            self.package = package

        def setup(self, worker):
            import os
            import sys

            extra = [d for d in os.environ.get("LODESTAR_PLUGIN_PATH", "").split(os.pathsep) if d]
            for candidate in [*extra, self.folder]:
                if os.path.isdir(os.path.join(candidate, self.package)):
                    if candidate not in sys.path:
                        sys.path.insert(0, candidate)
                    return

    return LodestarPath(folder, package)


def connect(address: str, progress: Progress = SILENT):
    """A distributed.Client on the scheduler at `address` with the plugin importable on its workers. The client
    connects in a thread of its own while this one checks the cancel every POLL_S: a cancel ends the wait at once
    with Cancelled (a client that connects after it is closed), where an address that accepts and never answers
    holds the connection for CONNECT_TIMEOUT_S."""
    try:
        from distributed import Client
    except ImportError as exc:
        raise LodestarError("Running on a Dask cluster needs the 'distributed' package in QGIS's Python "
                            "(Debian: apt install python3-distributed; elsewhere: pip install distributed).") from exc
    outcome: dict = {}
    lock = threading.Lock()

    def attempt() -> None:
        try:
            client = Client(address, timeout=CONNECT_TIMEOUT_S, set_as_default=False)
        except BaseException as exc:  # noqa: BLE001 (handed to the waiting thread, which raises it)
            outcome["error"] = exc
            return
        with lock:
            given_up = outcome.get("given_up", False)
            outcome["client"] = client
        if given_up:
            client.close()

    thread = threading.Thread(target=attempt, name="lodestar-dask-connect", daemon=True)
    thread.start()
    while thread.is_alive():
        if progress.cancelled():
            with lock:
                outcome["given_up"] = True
                client = outcome.get("client")
            if client is not None:
                client.close()
            raise Cancelled()
        thread.join(POLL_S)
    if "error" in outcome:
        error = outcome["error"]
        if isinstance(error, (OSError, TimeoutError, ValueError)):
            raise LodestarError(f"Cannot reach the Dask scheduler at {address} ({error}). Start it with `dask "
                                "scheduler` and give its address (tcp://host:8786), or leave the scheduler empty to "
                                "run here.") from error
        raise error
    client = outcome["client"]
    folder, package = package_location()
    client.register_worker_plugin(_path_plugin(folder, package), name="lodestar-path")
    return client


def worker_threads(client) -> int:
    """Threads of all workers of the cluster now (at least 1)."""
    return max(1, sum(int(w.get("nthreads", 1)) for w in client.scheduler_info().get("workers", {}).values()))


def _guarded(function, give_up, attempts: str, *args):
    """One task on a worker: (function(*args), worker address). The run's variable `attempts` lists the workers
    that started this task before (each died, or it would not run again); when MAX_WORKERS_PER_TASK already did,
    `give_up(those workers, this worker, *args)` stands for the result instead."""
    from distributed import Variable, get_worker

    worker = get_worker().address
    started = Variable(attempts)
    before = list(started.get())
    if len(before) >= MAX_WORKERS_PER_TASK:
        return give_up(before, worker, *args), worker
    started.set(before + [worker])
    return function(*args), worker


def map_on_cluster(address: str, function: Callable, give_up: Callable, calls: list, progress: Progress,
                   on_result: Callable, on_error: Callable, label: str = "task") -> None:
    """`function(*args)` for each (index, args) of `calls` as one task each on the cluster at `address`, at most
    IN_FLIGHT_PER_THREAD per worker thread in flight. In completion order, `on_result(index, result, worker)`,
    or `on_error(index, exception)` when the task broke (an import error on the worker, the scheduler giving
    up on it). A task whose worker died runs once more elsewhere; when that worker dies too, `give_up` (see
    _guarded) gives its result. A cancel stops submitting and cancels every submitted future; the client is
    closed at the end. `function` and `give_up` must be importable module-level functions."""
    from distributed import Variable

    client = connect(address, progress)
    run_id = uuid.uuid4().hex[:12]
    todo = list(calls)
    in_flight: dict = {}
    variables = []
    try:
        progress.log(f"Dask cluster {address}: {len(client.scheduler_info().get('workers', {}))} worker(s), "
                     f"{len(todo)} {label}(s) to run")
        limit = IN_FLIGHT_PER_THREAD * worker_threads(client)
        while todo or in_flight:
            if progress.cancelled():
                raise Cancelled()
            while todo and len(in_flight) < limit:
                index, args = todo.pop(0)
                attempts = Variable(f"lodestar-{run_id}-{index}", client=client)
                attempts.set([])
                variables.append(attempts)
                future = client.submit(_guarded, function, give_up, attempts.name, *args,
                                       key=f"lodestar-{label}-{run_id}-{index}", pure=False)
                in_flight[future] = index
            finished = [f for f in in_flight if f.done()]
            if not finished:
                time.sleep(POLL_S)
                continue
            for future in finished:
                index = in_flight.pop(future)
                try:
                    result, worker = future.result()
                except Exception as exc:  # noqa: BLE001 (the task broke on the cluster: said by the caller)
                    on_error(index, exc)
                else:
                    on_result(index, result, worker)
    except BaseException:
        if in_flight:
            client.cancel(list(in_flight), force=True)
        raise
    finally:
        for variable in variables:
            try:
                variable.delete()
            except Exception:  # noqa: BLE001 (a scheduler gone away has nothing left to clean)
                pass
        client.close()
