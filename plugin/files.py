"""The one way Lodestar writes a file: whole or not at all.

Every output goes through a temporary file beside its target (same folder, so the final rename is
atomic) and replaces the target only once complete. A failure removes the temporary file and is a
`LodestarError` naming the target; nothing half-written is left behind. The outputs of one run go
through an `OutputSet`: written into a staging folder beside their targets, then moved into place
together under a lock, so two runs writing the same paths leave one run's complete set.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from .errors import LodestarError

PNG_OPTIONS = {"compress_level": 1}
"""How every PNG is encoded (PIL's options; matplotlib's `pil_kwargs`): zlib's fastest level, half the time of the
default level for about 1 % more bytes."""


def sha256_file(path) -> str:
    """The SHA-256 of a file's bytes, read a megabyte at a time (hex digits)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@contextmanager
def atomic_path(path, suffix: str | None = None) -> Iterator[Path]:
    """Yield a temporary path beside `path` to write to; on success it replaces `path`.

    For writers that need a file name (rasterio, matplotlib, networkx). The temporary name keeps the
    target's suffix (or `suffix`) so that drivers choosing a format by extension still work.
    """
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix=f".{path.stem}-", suffix=suffix or path.suffix, dir=path.parent)
        os.close(fd)
    except OSError as exc:
        raise LodestarError(f"Could not write {path}: {exc}. Choose a folder you can write to.") from exc
    tmp = Path(name)
    try:
        yield tmp
        os.replace(tmp, path)
    except LodestarError:
        tmp.unlink(missing_ok=True)
        raise
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise LodestarError(f"Could not write {path}: {exc}. Choose a folder you can write to.") from exc
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_bytes_atomic(path, payload: bytes) -> Path:
    """Write bytes to `path`, whole or not at all."""
    path = Path(path)
    with atomic_path(path) as tmp:
        tmp.write_bytes(payload)
    return path


def write_text_atomic(path, text: str, encoding: str = "utf-8") -> Path:
    """Write text to `path` (UTF-8 by default, newlines as given), whole or not at all."""
    return write_bytes_atomic(path, text.encode(encoding))


class OutputSet:
    """The outputs of one run, written together: each is written into a staging folder beside its target (same
    folder, so moving it is a rename), and `publish()` moves them all into place at once, holding a lock on every
    target folder, so two runs writing the same paths leave one run's complete set, never a mix of both. Used as a
    context manager, it publishes on success and removes its staging folders on any failure or cancel.

        with OutputSet() as outputs:
            write_vector(frame, outputs.path(target))  # any writer; sidecars beside it move too
    """

    def __init__(self) -> None:
        self._stages: dict = {}  # target folder -> its staging folder

    def path(self, target) -> Path:
        """Where to write the output meant for `target` (a file name inside this run's staging folder there)."""
        target = Path(target)
        folder = target.parent.resolve()
        if folder not in self._stages:
            try:
                folder.mkdir(parents=True, exist_ok=True)
                self._stages[folder] = Path(tempfile.mkdtemp(prefix=".lodestar-run-", dir=folder))
            except OSError as exc:
                raise LodestarError(f"Could not write {target}: {exc}. Choose a folder you can write to.") from exc
        return self._stages[folder] / target.name

    def publish(self) -> None:
        """Move every staged file into its target folder, all folders locked for the whole move."""
        folders = sorted(self._stages)
        with _locked(folders):
            for folder in folders:
                stage = self._stages[folder]
                for staged in sorted(stage.iterdir()):
                    try:
                        os.replace(staged, folder / staged.name)
                    except OSError as exc:
                        raise LodestarError(f"Could not write {folder / staged.name}: {exc}. Choose a folder you "
                                            "can write to.") from exc
        self.discard()

    def discard(self) -> None:
        """Remove the staging folders and whatever is still in them."""
        for stage in self._stages.values():
            shutil.rmtree(stage, ignore_errors=True)
        self._stages = {}

    def __enter__(self) -> OutputSet:
        return self

    def __exit__(self, kind, value, traceback) -> None:
        try:
            if kind is None:
                self.publish()
        finally:
            self.discard()


@contextmanager
def _locked(folders: list) -> Iterator[None]:
    """An exclusive lock on each folder (in the order given: sorted, so two runs never wait on each other), held
    while a run's outputs move into them. On POSIX the folder itself is locked (nothing is left behind); on Windows,
    where a folder cannot be opened for locking, one lock file in the temporary folder serves every run."""
    if sys.platform == "win32":  # os.name == "nt" (spelt so the type checker knows the platform)
        import msvcrt

        with open(Path(tempfile.gettempdir()) / "lodestar-outputs.lock", "a+b") as handle:
            while True:
                try:
                    msvcrt.locking(handle.fileno(), msvcrt.LK_LOCK, 1)  # retries for 10 s, then raises
                    break
                except OSError:
                    continue
            try:
                yield
            finally:
                handle.seek(0)
                msvcrt.locking(handle.fileno(), msvcrt.LK_UNLCK, 1)
        return
    import fcntl

    handles: list[int] = []
    try:
        for folder in folders:
            handle = os.open(folder, os.O_RDONLY)
            handles.append(handle)
            fcntl.flock(handle, fcntl.LOCK_EX)
        yield
    finally:
        for handle in reversed(handles):
            fcntl.flock(handle, fcntl.LOCK_UN)
            os.close(handle)
