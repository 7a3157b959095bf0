"""The one way Lodestar writes a file: whole or not at all.

Every output goes through a temporary file beside its target (same folder, so the final rename is
atomic) and replaces the target only once complete. A failure removes the temporary file and is a
`LodestarError` naming the target; nothing half-written is left behind.
"""
from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from .errors import LodestarError


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
