"""The dock's results: the answer banner, the usage table, the final chain, the evidence weights and the validation
against known deposits, the run's layers in the project, and what acts on them (zoom to a step's zones, export the
prospectivity polygons, open the report)."""
from __future__ import annotations

import re
from dataclasses import replace
from html import escape
from pathlib import Path

from qgis.core import QgsProject
from qgis.PyQt.QtCore import QUrl
from qgis.PyQt.QtGui import QDesktopServices
from qgis.PyQt.QtWidgets import QFileDialog, QHeaderView, QListWidgetItem, QTableWidgetItem

from ..plugin.analysis import AnalysisResult
from ..plugin.errors import LodestarError
from ..plugin.events import GOOD, NEUTRAL
from ..plugin.favourability.models import LABELS
from ..plugin.labels import format_area_km2, humanize, plural, target_figure, tool_label, usage_rows
from ..plugin.reason.contract import FAILED, INSUFFICIENT
from ..plugin.runs.run_history import read_record
from ..plugin.vector_io import shapefile_note, write_vector
from . import layers as result_layers
from .choices_view import ChoicesView
from .deposit_check import DepositCheckView
from .evidence_view import EvidenceView
from .reasoning_view import ZONES_ROLE, tone_colour
from .report_view import browser_problem, open_report
from .targets_view import TargetsView
from .validation_view import ValidationView

BANNER_COLOURS = {"yes": "#c8e6c9", "voted": "#ffe0b2", FAILED: "#ffcdd2", INSUFFICIENT: "#d1c4e9"}
"""Answer banner backgrounds: verified, voted, no answer, and the third outcome (critical evidence untestable)."""


def targets_line(prospectivity, shown: int = 5) -> str:
    """'Targets: #1 (favourability (p90) 0.901, 3.1 km2, strong), ... (12 in all)' for the results tab: the best
    `shown` of them with the figure they are ranked by (`labels.target_figure`, as the Targets page names it), area
    and the chain's verdict ('' when none)."""
    if prospectivity is None or not len(prospectivity):
        return ""
    parts = []
    for row in prospectivity.sort_values("rank").head(shown).to_dict("records"):
        details = [" ".join(target_figure(row))]
        if row.get("area_km2") is not None and prospectivity.crs is not None:
            details.append(format_area_km2(float(row["area_km2"]) * 1e6))
        details.append(str(row.get("verdict") or "not judged"))
        parts.append(f"#{int(row['rank'])} ({', '.join(details)})")
    more = f", ... ({len(prospectivity)} in all)" if len(prospectivity) > shown else ""
    return "<b>Targets:</b> " + ", ".join(parts) + more + "<br>"


BANNER_TARGETS = 3
"""How many of a "where" answer's ranked targets the banner names (the Targets page lists them all)."""
_TARGETS_OVER = re.compile(r"\b[\d,]+ targets?(\(s\))? over ")
"""A "where" answer's head: '12 targets over' ('target(s) over' in records written before the counts agreed)."""


def banner_text(answer_text: str) -> str:
    """The answer as the banner shows it: a "where" answer's count and area with its best BANNER_TARGETS targets,
    the rest left to the Targets page; any other answer whole."""
    head, sep, listed = (answer_text or "").partition(" best first: ")
    if not sep or not _TARGETS_OVER.search(head):
        return answer_text or ""
    places = listed.rstrip(".").split("; ")
    more = f"; … ({len(places) - BANNER_TARGETS} more on the Targets page)" if len(places) > BANNER_TARGETS else ""
    return f"{head} best first: {'; '.join(places[:BANNER_TARGETS])}{more}."


def calibration_clause(validation: dict | None) -> str:
    """Which surface the targets came from, when the run was calibrated ('' otherwise): the banner says it, the
    Validation page says why."""
    method = (validation or {}).get("method")
    if not method:
        return ""
    model = LABELS.get(method, method)
    if validation.get("refused"):
        return (f"; targets from the knowledge-driven surface: the calibrated {model} does not beat the equal-weight "
                "baseline out of fold (Validation page)")
    return f"; targets from the calibrated {model} (Validation page)"


def calibration_of(result: AnalysisResult) -> dict:
    """The calibration section of a run's record ({} when it was not calibrated or its record cannot be read)."""
    record = (result.outputs or {}).get("record")
    if not result.validation.get("method") or record is None:
        return {}
    try:
        return (read_record(Path(record).parent).get("favourability") or {}).get("calibration") or {}
    except LodestarError:
        return {}


def zone_ids(item) -> list:
    """The zone ids a chain list item or a reasoning tree item carries ([] when none)."""
    ids = item.data(ZONES_ROLE) if isinstance(item, QListWidgetItem) else item.data(0, ZONES_ROLE)
    return list(ids or [])


def key_id(layer) -> str:
    """A layer's id, or '' when its object was already deleted (layer removed from the project)."""
    try:
        return layer.id()
    except RuntimeError:
        return ""


class ResultsView:
    """The last run's result in the dock's widgets (`ui`: the dock's form): `result`, its layer `group` and
    `layers` (output key -> layer) in the project."""

    def __init__(self, ui, iface):
        self.ui = ui
        self.iface = iface
        self.result: AnalysisResult | None = None
        self.open_url = QDesktopServices.openUrl  # replaceable (tests)
        self.group = None
        self.layers: dict = {}
        self.evidence = EvidenceView(ui)
        self.validation = ValidationView(ui)
        self.choices = ChoicesView(ui.resultsToolBox)
        self.targets = TargetsView(ui.resultsToolBox, iface)
        self.deposit_check = DepositCheckView(ui.validationPage, iface)
        ui.validationPageLayout.addWidget(self.deposit_check.box)
        self.report_dialog = None  # the dialog shown when no browser opened the report
        ui.usageTable.horizontalHeader().setSectionResizeMode(QHeaderView.Stretch)
        ui.usageTable.verticalHeader().setVisible(False)

    def clear(self) -> None:
        self.result = None
        ui = self.ui
        ui.chainList.clear()
        ui.usageTable.setRowCount(0)
        self.evidence.clear()
        self.validation.clear()
        self.choices.clear()
        self.targets.show(None, None)
        self.deposit_check.set_result(None, None)
        self.group, self.layers = None, {}
        ui.answerBanner.clear()
        ui.answerBanner.setVisible(False)
        ui.exportButton.setEnabled(False)
        ui.reportButton.setEnabled(False)
        ui.fullSurfaceButton.setEnabled(False)
        ui.runFolderLabel.clear()

    def show(self, result: AnalysisResult, run_folder: Path | None, run_name: str) -> None:
        """The answer; the result layers in a new group named `run_name`; the chain, the evidence weights, the
        validation, the usage, the run folder and the buttons that act on the result."""
        self.result = result
        self.show_answer(result)
        if result.answer == FAILED:
            self.ui.messageBar.pushWarning("Lodestar", "No answer: " + (" ".join(map(str, result.notes))
                                                                        or "see the run record."))
        self.group, self.layers = None, {}
        surface = result.answer != FAILED and result.outputs.get("favourability")  # none from a run that failed
        if len(result.zones) or len(result.prospectivity) or surface:
            try:
                self.group, self.layers = result_layers.add_result_layers(result.outputs, run_name)
            except LodestarError as exc:
                self.ui.messageBar.pushCritical("Lodestar", str(exc))
        self.show_chain(result)
        self.evidence.show(result.weights, result.unused, calibration_of(result).get("wofe"))
        self.validation.show(result.validation)
        self.choices.show(result, Path(result.outputs["record"]) if result.outputs.get("record") else None)
        self.targets.show(result.prospectivity if len(result.prospectivity) else None, self.layers.get("prospectivity"),
                          result.prospects, self.layers.get("prospects"))
        self.deposit_check.set_result(result, run_folder)
        ui = self.ui
        ui.exportButton.setEnabled(result.prospectivity is not None and len(result.prospectivity) > 0)
        report = result.outputs.get("report")
        ui.reportButton.setEnabled(report is not None and Path(report).exists())
        record = result.outputs.get("record")
        ui.fullSurfaceButton.setEnabled(bool(surface) and run_folder is not None and record is not None)
        if run_folder is not None:
            text = targets_line(result.prospectivity)
            text += f'Run folder: <a href="{QUrl.fromLocalFile(str(run_folder)).toString()}">{run_folder}</a>'
            if record is not None:
                text += f"<br>Run record: {Path(record).name}"
            ui.runFolderLabel.setText(text)

    def show_replanned(self, targets, layer) -> None:
        """Targets re-made with an edited plan (`replan`; `layer`: their layer in the project): shown on the Targets
        page and written by Export in place of the run's."""
        if self.result is None:
            return
        self.result = replace(self.result, prospectivity=targets)
        self.targets.show(targets if len(targets) else None, layer, None, None)
        self.ui.exportButton.setEnabled(len(targets) > 0)

    def show_answer(self, result: AnalysisResult) -> None:
        text = banner_text(result.answer_text)
        headline = f"<b>Answer {result.answer}</b>" + (f": {escape(text)}" if text else "")
        if result.answer == FAILED:
            colour, how = BANNER_COLOURS[FAILED], "no round produced an answer"
        elif result.answer == INSUFFICIENT:  # the engine's note names the missing roles
            headline, colour = f"<b>{INSUFFICIENT}</b>", BANNER_COLOURS[INSUFFICIENT]
            how = next((humanize(str(n).split(": ", 1)[1]) for n in result.notes
                        if str(n).startswith(INSUFFICIENT + ": ")),
                       "the critical evidence cannot be tested with these layers")
        elif result.valid:
            colour, how = BANNER_COLOURS["yes"], "the verifier accepted the chain"
        else:
            colour, how = BANNER_COLOURS["voted"], "no chain was accepted; answer by majority vote"
        rounds = f"{result.rounds} round{'s' if result.rounds != 1 else ''}"
        banner = self.ui.answerBanner
        banner.setText(f"{headline}<br><small>{escape(how)} ({rounds}){escape(calibration_clause(result.validation))}"
                       "</small>")
        banner.setStyleSheet(f"background:{colour}; padding:6px; border-radius:4px;")
        banner.setVisible(True)
        self.show_usage(result.usage or {})

    def show_usage(self, usage: dict) -> None:
        """The model calls, tokens and seconds per role; one line saying so when no model was called (offline)."""
        table = self.ui.usageTable
        rows, none = usage_rows(usage)
        table.clearSpans()
        table.setRowCount(len(rows) or 1)
        if none:
            table.setItem(0, 0, QTableWidgetItem(none[:1].upper() + none[1:] + "."))
            table.setSpan(0, 0, 1, table.columnCount())
            return
        for row, values in enumerate(rows):
            for col, value in enumerate(values):
                table.setItem(row, col, QTableWidgetItem(value))

    def show_chain(self, result: AnalysisResult) -> None:
        """List the final chain's steps with their zones (click to zoom)."""
        chain = self.ui.chainList
        chain.clear()
        for node in result.chain or []:
            step = node.get("step", {}) if isinstance(node, dict) else {}
            obs = node.get("observation", {}) if isinstance(node, dict) else {}
            supports = obs.get("sub_inference") == "Yes"
            ids = [str(z) for z in obs.get("zone_ids") or []]
            item = QListWidgetItem(f"{step.get('index', obs.get('step', ''))}. {humanize(step.get('purpose', ''))}\n"
                                   f"    {tool_label(obs.get('tool', ''))}: {plural(len(ids), 'zone')}, "
                                   f"{'supports' if supports else 'does not support'} the answer")
            item.setToolTip(humanize(obs.get("rationale", "")))
            item.setForeground(tone_colour(GOOD if supports else NEUTRAL))
            item.setData(ZONES_ROLE, ids)
            chain.addItem(item)

    def forget_removed_layers(self) -> None:
        """Forget the result layers the user removed from the project (and the group once all are gone)."""
        project = QgsProject.instance()
        self.layers = {key: layer for key, layer in self.layers.items() if project.mapLayer(key_id(layer))}
        if not self.layers:
            self.group = None

    def zoom_to_item(self, item) -> bool:
        """Zoom the map to the zones of a chain step (list or tree item); False when it has none on the map."""
        ids = zone_ids(item)
        if not ids:
            return False
        for key in ("zones", "nodes"):
            layer = self.layers.get(key)
            if layer is not None and result_layers.zoom_to_zones(self.iface.mapCanvas(), layer, ids):
                return True
        return False

    def export(self, path) -> Path:
        """Write the prospectivity polygons to a Shapefile, GeoPackage or any OGR format by extension."""
        if self.result is None:
            raise LodestarError("Run an analysis first; there are no prospectivity polygons to export.")
        note = shapefile_note(self.result.prospectivity, path)
        written = write_vector(self.result.prospectivity, Path(path), layer="prospectivity")
        self.ui.messageBar.pushSuccess("Lodestar", f"Exported {len(self.result.prospectivity)} prospectivity polygons "
                                                   f"to {written}. {note}".strip())
        return written

    def export_clicked(self, parent, folder) -> None:
        """Ask for a file and export to it; a name typed without a suffix gets the format of the filter chosen."""
        path, chosen = QFileDialog.getSaveFileName(parent, "Export prospectivity polygons", str(folder or ""),
                                                   "Shapefile (*.shp);;GeoPackage (*.gpkg)")
        if not path:
            return
        if not Path(path).suffix:
            path += ".gpkg" if "gpkg" in chosen else ".shp"
        try:
            self.export(path)
        except LodestarError as exc:
            self.ui.messageBar.pushCritical("Lodestar", str(exc))

    def open_folder(self, url: str) -> bool:
        """Open a folder link in the file manager; when none opens it, say where the folder is."""
        if self.open_url(QUrl(url)):
            return True
        folder = QUrl(url).toLocalFile()
        self.ui.messageBar.pushWarning("Lodestar", f"No file manager opened the folder; it is {folder}")
        return False

    def open_report(self, parent=None):
        """Open the report in the browser; when none opens it, the dialog that offers its path, its folder and a
        view inside QGIS (returned, and kept in `report_dialog`)."""
        report = self.result.outputs.get("report") if self.result else None
        if report is None:
            self.ui.messageBar.pushWarning("Lodestar", "This run wrote no report.")
            return None
        problem = browser_problem() if self.open_url == QDesktopServices.openUrl else ""  # a replacement: asked as is
        self.report_dialog = open_report(report, self.open_url, parent, problem)
        return self.report_dialog
