"""The missing-packages panel: Copy command copies the platform's command; Install missing packages runs the exact
pip command (here a fake pip executable that records its arguments, never the network) with a busy bar while it
runs, its output in the log, and a clear result for success and for failure."""
from __future__ import annotations

import stat

from qgis.PyQt.QtWidgets import QApplication

from lodestar.plugin.dependencies import BY_MODULE, WINDOWS, install_command
from lodestar.ui.dependencies_panel import PackagesPanel

SKLEARN = BY_MODULE["sklearn"]


def _fake_python(folder, code: int):
    """An executable standing in for QGIS's Python: it writes its arguments to args.txt, prints a line, exits."""
    script = folder / "fake-python"
    script.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > "{folder}/args.txt"\necho "Collecting scikit-learn"\n'
                      f'echo "ERROR: no network here" >&2\nexit {code}\n')
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script


def _install(panel) -> None:
    process = panel.install()
    assert panel.progress.isVisibleTo(panel) and not panel.install_button.isEnabled()  # busy while pip runs
    assert process.waitForFinished(30000)
    QApplication.processEvents()


def test_copy_command_copies_the_platform_command(qgis_app, tmp_path):
    panel = PackagesPanel([SKLEARN], platform=WINDOWS, profile_dir=str(tmp_path / "profile"))
    assert panel.command.text() == install_command([SKLEARN], WINDOWS) == "python -m pip install --user scikit-learn"
    QApplication.clipboard().clear()
    panel.copy_button.click()
    assert QApplication.clipboard().text() == "python -m pip install --user scikit-learn"


def test_install_runs_pip_with_qgis_python_into_the_profile(qgis_app, tmp_path):
    python = _fake_python(tmp_path, 0)
    panel = PackagesPanel([SKLEARN], python=str(python), profile_dir=str(tmp_path / "profile"))
    _install(panel)
    target = tmp_path / "profile" / "python" / "lodestar-packages"
    recorded = (tmp_path / "args.txt").read_text().splitlines()
    assert recorded == panel.args[1:] and recorded[:6] == ["-m", "pip", "install", "--disable-pip-version-check",
                                                           "--no-input", "--target"]
    assert recorded[6] == str(target) and recorded[-1] == "scikit-learn"
    assert "Collecting scikit-learn" in panel.log.toPlainText()
    assert panel.result.text() == f"Installed scikit-learn into {target}. Restart QGIS to use them."
    assert not panel.progress.isVisibleTo(panel) and not panel.install_button.isEnabled()


def test_a_failed_install_says_so_with_pip_own_words(qgis_app, tmp_path):
    panel = PackagesPanel([SKLEARN], python=str(_fake_python(tmp_path, 1)), profile_dir=str(tmp_path / "profile"))
    _install(panel)
    text = panel.result.text()
    assert text.startswith("pip failed (exit code 1), nothing was changed in QGIS.")
    assert "ERROR: no network here" in text and text.endswith("Run the command above instead.")
    assert panel.install_button.isEnabled()  # the user may try again


def test_a_python_that_cannot_start_says_what_to_do(qgis_app, tmp_path):
    panel = PackagesPanel([SKLEARN], python=str(tmp_path / "no-such-python"), profile_dir=str(tmp_path / "profile"))
    process = panel.install()
    process.waitForFinished(5000)
    QApplication.processEvents()
    assert panel.result.text() == (f"Could not start no-such-python ({tmp_path / 'no-such-python'}): run the command "
                                   "above instead.")
