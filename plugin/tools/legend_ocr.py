"""Legend names read with Tesseract OCR (the `tesseract` program, run once per label, one line each).

Each label strip is turned grey, enlarged so letters stand about 40 pixels tall (what Tesseract reads best), given a
white margin, and read as one line of English text; the text comes back word by word with confidences (TSV).
`LODESTAR_TESSERACT` names the program where it is not on the PATH (Windows).
"""
from __future__ import annotations

import csv
import io
import os
import re
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from PIL import Image

from ..decisions import CORE
from ..errors import LodestarError
from .legend_words import correct_name, user_words_text

# decision numbers: their reasons and provenance are in plugin/decisions.py
LETTER_PX = CORE.letter_px
TIMEOUT_S = 60
INSTALL = ("Reading legend names needs Tesseract OCR, which is not installed. Install it: on Debian or Ubuntu "
           "`sudo apt-get install tesseract-ocr`; on macOS `brew install tesseract`; on Windows the installer of "
           "UB Mannheim (github.com/UB-Mannheim/tesseract/wiki), then add its folder to the PATH or set "
           "LODESTAR_TESSERACT to the full path of tesseract.exe; then restart QGIS.")


@dataclass
class OcrLine:
    """One label read: the name, the raw text Tesseract gave, its mean word confidence (0-100), and the words
    taken for vocabulary words (read, taken)."""

    name: str
    raw: str
    confidence: float
    words_corrected: list = field(default_factory=list)


def tesseract_program() -> str:
    """The tesseract executable, or a LodestarError saying how to install it."""
    given = os.environ.get("LODESTAR_TESSERACT", "").strip()
    program = given if given and Path(given).is_file() else shutil.which(given or "tesseract")
    if not program:
        raise LodestarError(INSTALL)
    return program


def tesseract_version(program: str) -> str:
    done = subprocess.run([program, "--version"], capture_output=True, text=True, timeout=TIMEOUT_S)
    return (done.stdout or done.stderr).splitlines()[0].strip() if (done.stdout or done.stderr) else "tesseract"


def clean_name(text: str) -> str:
    """A read line as a unit name: spaces collapsed, stray marks at either end (a swatch edge read as `|`, dots, dashes
    of a leader line) removed."""
    text = " ".join(text.split())
    return re.sub(r"^(?:[^\w(]|_)+|(?:[^\w)]|_)+$", "", text)


def read_labels(strips: list, program: str | None = None, workers: int = 2) -> list[OcrLine]:
    """The text of each label strip, a (3, rows, cols) uint8 image."""
    program = program or tesseract_program()
    strips = [_prepared(strip) for strip in strips]
    with tempfile.TemporaryDirectory(prefix="lodestar-ocr-") as folder:
        words = Path(folder) / "geology.user-words"
        words.write_text(user_words_text(), encoding="utf-8")
        paths = []
        for i, strip in enumerate(strips):
            path = Path(folder) / f"label{i}.png"
            Image.fromarray(strip).save(path)
            paths.append(path)
        with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
            return list(pool.map(lambda path: _read_line(program, path, words), paths))


def _prepared(strip: np.ndarray) -> np.ndarray:
    """The label strip in grey, enlarged to LETTER_PX rows of letters, inside a white margin."""
    grey = strip.astype(np.float32).mean(axis=0)
    image = Image.fromarray(np.clip(grey, 0, 255).astype(np.uint8))
    dark = np.nonzero((grey < 128).any(axis=1))[0]
    letters = (dark[-1] - dark[0] + 1) if dark.size else grey.shape[0]
    scale = min(6.0, max(1.0, LETTER_PX / max(1, letters)))
    image = image.resize((max(1, round(image.width * scale)), max(1, round(image.height * scale))), Image.BICUBIC)
    margin = 20
    framed = Image.new("L", (image.width + 2 * margin, image.height + 2 * margin), 255)
    framed.paste(image, (margin, margin))
    return np.asarray(framed)


def _read_line(program: str, path: Path, words: Path) -> OcrLine:
    env = dict(os.environ, OMP_THREAD_LIMIT="1")  # one thread per call: the calls run side by side
    try:
        done = subprocess.run([program, str(path), "stdout", "--psm", "7", "-l", "eng", "--user-words", str(words),
                               "tsv"], capture_output=True,
                              text=True, timeout=TIMEOUT_S, env=env)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise LodestarError(f"Tesseract OCR could not run ({exc}). Check that `{program} --version` works.") from exc
    if done.returncode != 0:
        raise LodestarError(f"Tesseract OCR failed: {done.stderr.strip()[-400:]}. Check that the English language "
                            "data is installed (Debian: tesseract-ocr-eng).")
    read, confidences = [], []
    for row in csv.DictReader(io.StringIO(done.stdout), delimiter="\t", quoting=csv.QUOTE_NONE):
        text = (row.get("text") or "").strip()
        if row.get("level") == "5" and text:
            read.append(text)
            confidences.append(float(row.get("conf") or 0))
    raw = " ".join(read)
    name, changes = correct_name(clean_name(raw))
    return OcrLine(name, raw, round(float(np.mean(confidences)), 1) if confidences else 0.0, changes)
