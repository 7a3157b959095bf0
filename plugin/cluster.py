"""Dask clusters: connecting to a scheduler, making the plugin importable on its workers, batch cases as tasks.

A cluster is a `dask scheduler` and `dask worker tcp://host:8786` processes on each machine, every
worker running a Python that has the plugin's dependencies (numpy < 2, rasterio, geopandas, scipy,
networkx, dask, distributed). The plugin's own package travels by path: the client registers a worker
plugin that puts the folder holding the package (this machine's, or the worker's LODESTAR_PLUGIN_PATH)
on the worker's sys.path, also on workers that join or restart later. Case folders and output folders
must be at the same paths on every machine (a shared file system).

`run_cases_on_cluster` sends one task per case, keeps at most a few per worker thread in flight (so a
cancel stops submitting), gathers the rows in case order, records the worker that ran each, and
survives a worker's death: the scheduler re-runs the case elsewhere once; a case whose second worker
dies too is recorded as failed with the reason. A cancel cancels every submitted future at once.
"""
from __future__ import annotations

import os
import sys
import time
import uuid
from pathlib import Path
from typing import Callable

from .errors import Cancelled, LodestarError
from .progress import Progress

CONNECT_TIMEOUT_S = 10
POLL_S = 0.1
"""How often the client looks at its futures and at the cancel flag (a cancel takes effect within this)."""
IN_FLIGHT_PER_THREAD = 2
MAX_WORKERS_PER_CASE = 2
"""A case is started on at most this many workers: the first, and once more elsewhere after that one died."""
PATH_ENV = "LODESTAR_PLUGIN_PATH"


def package_location() -> tuple[str, str]:
    """(folder holding the plugin package, the package's import name) of this process: the folder name of the
    plugin differs by install (`lodestar` in QGIS), so workers import it under the name the client uses."""
    top = __name__.split(".")[0]
    module = sys.modules[top]
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


def connect(address: str):
    """A distributed.Client on the scheduler at `address` with the plugin importable on its workers."""
    try:
        from distributed import Client
    except ImportError as exc:
        raise LodestarError("Running on a Dask cluster needs the 'distributed' package in QGIS's Python "
                            "(Debian: apt install python3-distributed; elsewhere: pip install distributed).") from exc
    try:
        client = Client(address, timeout=CONNECT_TIMEOUT_S, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        raise LodestarError(f"Cannot reach the Dask scheduler at {address} ({exc}). Start it with `dask scheduler` "
                            "and give its address (tcp://host:8786), or leave the scheduler empty to run "
                            "here.") from exc
    folder, package = package_location()
    client.register_worker_plugin(_path_plugin(folder, package), name="lodestar-path")
    return client


def worker_threads(client) -> int:
    """Threads of all workers of the cluster now (at least 1)."""
    return max(1, sum(int(w.get("nthreads", 1)) for w in client.scheduler_info().get("workers", {}).values()))


def _case_task(path: str, case_out: str, settings, max_rounds: int, analyse, localization, surface,
               attempts: str):
    """One case on a worker: (row, worker address). The run's variable `attempts` lists the workers that
    started the case before; when MAX_WORKERS_PER_CASE already did (each died), the case is not started again
    and comes back as failed with the reason."""
    from distributed import Variable, get_worker

    from .batch import failed_row, run_case_file
    from .progress import SILENT

    worker = get_worker().address
    started = Variable(attempts)
    before = list(started.get())
    if len(before) >= MAX_WORKERS_PER_CASE:
        return failed_row(path, case_out, f"Failed: the worker running it died ({', '.join(before)}), after one "
                                          "retry elsewhere.", worker), worker
    started.set(before + [worker])
    row = run_case_file(Path(path), Path(case_out), settings, max_rounds, SILENT, analyse, localization, surface)
    row.worker = worker
    return row, worker


def run_cases_on_cluster(address: str, planned: list, settings, max_rounds: int, progress: Progress,
                         analyse: Callable | None = None, localization: dict | None = None,
                         surface: dict | None = None) -> list:
    """The rows of `planned` (plugin.batch.plan_cases) run on the cluster at `address`, in case order."""
    from distributed import Variable

    from .batch import failed_row, log_outcome

    client = connect(address)
    run_id = uuid.uuid4().hex[:12]
    rows: list = [row for _, _, row, _ in planned]
    todo = [i for i, (_, _, row, _) in enumerate(planned) if row is None]
    total = len(planned)
    done = total - len(todo)
    in_flight: dict = {}
    variables = []
    try:
        progress.log(f"Dask cluster {address}: {len(client.scheduler_info().get('workers', {}))} worker(s), "
                     f"{len(todo)} case(s) to run")
        limit = IN_FLIGHT_PER_THREAD * worker_threads(client)
        while todo or in_flight:
            if progress.cancelled():
                raise Cancelled()
            while todo and len(in_flight) < limit:
                i = todo.pop(0)
                path, case_out, _, label = planned[i]
                attempts = Variable(f"lodestar-{run_id}-{i}", client=client)
                attempts.set([])
                variables.append(attempts)
                key = f"lodestar-case-{run_id}-{i}"
                future = client.submit(_case_task, str(path), str(case_out), settings, max_rounds, analyse,
                                       localization, surface, attempts.name, key=key, pure=False)
                in_flight[future] = i
            finished = [f for f in in_flight if f.done()]
            if not finished:
                time.sleep(POLL_S)
                continue
            for future in finished:
                i = in_flight.pop(future)
                path, case_out, _, label = planned[i]
                try:
                    row, _worker = future.result()
                except Exception as exc:  # the task itself broke (KilledWorker, an import error on the worker)
                    row = failed_row(path, case_out, f"Failed on the cluster: {type(exc).__name__}: {exc}")
                rows[i] = row
                done += 1
                progress.log(f"[{done}/{total}] {row.case_id}")
                log_outcome(progress, row)
                progress.set(100.0 * done / total)
        return rows
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
