"""The validation page's check against a deposits layer of the project: pick a point layer, see the deposits captured
in the most favourable 2, 5, 10 and 20 % of the analysed area, the success-rate curves of the surface and of the
targets, and which deposits fall outside the targets (selectable on the map).

The figures are lodestar:evaluate's, computed by the same functions: the surface ranked cell by cell over its data
cells (`EvaluateAlgorithm.surface_metrics`, the core's `evaluate_surface`) and the targets by rank with the surface's
data cells as the analysed area (the core's `evaluate_localization`)."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from qgis.core import QgsMapLayerProxyModel, QgsWkbTypes
from qgis.gui import QgsMapLayerComboBox
from qgis.PyQt.QtCore import QObject, Qt
from qgis.PyQt.QtGui import QPixmap
from qgis.PyQt.QtWidgets import (
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
)

from ..plugin.errors import LodestarError
from ..plugin.evaluation import DEFAULT_SHARES, beside_surface, deposit_coordinates, evaluate_localization
from ..plugin.labels import TIES_NOTE, best_targets_hold, format_area_km2
from ..plugin.raster_io import RasterReader
from ..plugin.vector_io import read_vector
from ..processing.alg_evaluate import EvaluateAlgorithm
from ..processing.layer_export import layer_path
from .table_fit import fit_to_width
from .validation_view import captured, plot_png

HEADERS = ("Ranked by", "AUC", "2 %", "5 %", "10 %", "20 %", "Found")
FID_ROLE = Qt.UserRole + 4


@dataclass
class DepositCheck:
    """The figures of one check: the surface's and the targets' metrics as lodestar:evaluate gives them, and per
    deposit point its feature id, whether it lies in the analysed area and in a target."""

    surface: dict
    targets: dict
    fids: list = field(default_factory=list)  # feature id of each deposit point, in the core's order
    names: list = field(default_factory=list)

    @property
    def outside_targets(self) -> list:
        """Indices of the deposits in the analysed area that no target covers."""
        shares, ranks = self.surface["deposit_area_shares"], self.targets["deposit_ranks"]
        return [k for k in range(len(ranks)) if ranks[k] is None and shares[k] is not None]

    @property
    def outside_area(self) -> list:
        """Indices of the deposits outside the analysed area (not scored)."""
        return [k for k, share in enumerate(self.surface["deposit_area_shares"]) if share is None]


def deposit_features(layer) -> tuple[list, list]:
    """(feature ids, names) of a point layer's deposit points in the core's order (features with no geometry left
    out, a multi-point giving one entry per point)."""
    fields = [name for name in layer.fields().names() if name.lower() in ("name", "deposit", "site", "label")]
    fids, names = [], []
    for feature in layer.getFeatures():
        geometry = feature.geometry()
        if geometry is None or geometry.isNull() or geometry.isEmpty():
            continue
        parts = geometry.constGet().numGeometries() if QgsWkbTypes.isMultiType(geometry.wkbType()) else 1
        name = str(feature[fields[0]]) if fields and feature[fields[0]] is not None else f"feature {feature.id()}"
        fids.extend([feature.id()] * parts)
        names.extend([name] * parts)
    return fids, names


def check_deposits(result, layer, folder=None) -> DepositCheck:
    """Evaluate a run's favourability surface and targets against the deposits of a point layer."""
    surface = result.outputs.get("favourability") if result is not None else None
    targets = result.outputs.get("prospectivity") if result is not None else None
    if surface is None or not Path(surface).exists() or targets is None or not Path(targets).exists():
        raise LodestarError("This run has no favourability surface and targets to check against deposits.")
    deposits = read_vector(layer_path(layer, folder))
    log: list = []
    ranked = EvaluateAlgorithm.surface_metrics(str(surface), deposits, None, None, log)
    by_rank = evaluate_localization(read_vector(targets), deposits, analysis_raster=str(surface))
    reader = RasterReader(str(surface))
    by_rank = beside_surface(by_rank, reader.read(bands=[1])[0], reader.grid,
                             deposit_coordinates(deposits, reader.grid.crs, log))
    fids, names = deposit_features(layer)
    if len(fids) != len(ranked["deposit_area_shares"]):  # a layer the core reads otherwise than QGIS shows it
        fids, names = [], []
    return DepositCheck(surface=ranked, targets=by_rank, fids=fids, names=names)


def equal_area_text(equal: dict | None) -> str:
    """The best targets beside the surface's own best cells of the same area, in one sentence ('' without)."""
    if not equal:
        return ""
    return (f" {best_targets_hold(equal['rank'], equal['targets'])} in {equal['area_share']:.1%} of the "
            f"area; the surface's own best cells of the same area hold {equal['surface']:.1f}.")


class DepositCheckView(QObject):
    """The group box of the check (`box`), for the validation page's layout; `result` is the run checked."""

    def __init__(self, parent_widget, iface=None):
        super().__init__(parent_widget)
        self.iface = iface
        self.result = None
        self.folder = None
        self.check: DepositCheck | None = None
        self.box = QGroupBox("Check against a deposits layer", parent_widget)
        self.box.setObjectName("depositCheckGroup")
        layout = QVBoxLayout(self.box)
        row = QHBoxLayout()
        self.combo = QgsMapLayerComboBox(self.box)
        self.combo.setFilters(QgsMapLayerProxyModel.PointLayer)
        self.combo.setAllowEmptyLayer(True)
        self.combo.setLayer(None)
        self.combo.setToolTip("A point layer of known deposits in the project")
        self.check_button = QPushButton("Check", self.box)
        self.check_button.setToolTip("Figures as lodestar:evaluate gives them for this run's surface and targets")
        self.check_button.clicked.connect(lambda *_: self.run_check())
        row.addWidget(self.combo, 1)
        row.addWidget(self.check_button)
        layout.addLayout(row)
        self.note = QLabel(self.box)
        self.note.setWordWrap(True)
        layout.addWidget(self.note)
        self.table = QTableWidget(0, len(HEADERS), self.box)
        self.table.setHorizontalHeaderLabels(list(HEADERS))
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QTableWidget.NoEditTriggers)
        fit_to_width(self.table)
        self.table.setMaximumHeight(90)
        layout.addWidget(self.table)
        self.plot = QLabel(self.box)
        self.plot.setAlignment(Qt.AlignCenter)
        layout.addWidget(self.plot)
        self.missed = QListWidget(self.box)
        self.missed.setSelectionMode(QListWidget.ExtendedSelection)
        self.missed.setMaximumHeight(110)
        self.missed.setWordWrap(True)
        layout.addWidget(self.missed)
        self.select_button = QPushButton("Select these deposits on the map", self.box)
        self.select_button.setToolTip("Selects the deposits outside the targets (or those picked in the list) in the "
                                      "deposits layer")
        self.select_button.clicked.connect(lambda *_: self.select_missed())
        layout.addWidget(self.select_button)
        self.set_result(None, None)

    def set_result(self, result, folder) -> None:
        self.result, self.folder, self.check = result, folder, None
        ready = result is not None and bool(result.outputs.get("favourability"))
        self.check_button.setEnabled(ready)
        self.note.setText("Pick a point layer of deposits and press Check." if ready else
                          "Run an analysis first: its favourability surface and targets are checked here.")
        self.table.setRowCount(0)
        self.plot.clear()
        self.missed.clear()
        self.select_button.setEnabled(False)

    def run_check(self) -> DepositCheck | None:
        layer = self.combo.currentLayer()
        if layer is None:
            self.note.setText("Pick the deposits (a point layer of the project) first.")
            return None
        try:
            check = check_deposits(self.result, layer, Path(self.folder) / "inputs" if self.folder else None)
        except LodestarError as exc:
            self.note.setText(str(exc))
            return None
        self.check = check
        self._show(check, layer)
        return check

    def _show(self, check: DepositCheck, layer) -> None:
        surface, targets = check.surface, check.targets
        inside = surface["inside"]
        rows = (("Favourability surface", surface), (f"Targets ({format_area_km2(targets.get('selected_area'))}, "
                                                     f"{targets.get('selected_area', 0) / targets['valid_area']:.1%}"
                                                     " of the area)", targets))
        self.table.setRowCount(len(rows))
        for row, (name, metrics) in enumerate(rows):
            auc = metrics.get("auc")
            found = metrics.get("found")
            values = [name, "" if auc is None else f"{auc:.3f}",
                      *(captured(metrics["capture"].get(share)) for share in DEFAULT_SHARES),
                      "" if found is None else f"{found} of {inside}"]
            for col, value in enumerate(values):
                self.table.setItem(row, col, QTableWidgetItem(value))
        outside = len(check.outside_area)
        self.note.setText(f"{layer.name()}: {surface['deposits']} deposits, {inside} in the analysed area"
                          + (f", {outside} outside it (not scored)" if outside else "")
                          + ". Captured in the most favourable 2, 5, 10 and 20 % of the area; AUC 0.5 is chance. "
                          + TIES_NOTE + equal_area_text(targets.get("equal_area")))
        pixmap = QPixmap()
        pixmap.loadFromData(plot_png([("Surface", "#1565c0", surface["curve"], surface.get("auc"), 1.4),
                                      ("Targets", "#e65100", targets["curve"], targets.get("auc"), 1.0)]))
        self.plot.setPixmap(pixmap)
        self.missed.clear()
        for k in check.outside_targets:
            share = surface["deposit_area_shares"][k]
            name = check.names[k] if check.names else f"deposit {k + 1}"
            item = QListWidgetItem(f"{name}: outside the targets (the surface ranks it in the top {share:.0%} "
                                   "of the area)")
            item.setData(FID_ROLE, check.fids[k] if check.fids else None)
            self.missed.addItem(item)
        if not check.outside_targets:
            self.missed.addItem("Every deposit in the analysed area lies in a target.")
        self.select_button.setEnabled(bool(check.outside_targets and check.fids))

    def select_missed(self) -> list:
        """Select the deposits outside the targets (the ones picked in the list, else all) in the deposits layer;
        returns their feature ids."""
        layer = self.combo.currentLayer()
        if layer is None or self.check is None:
            return []
        items = self.missed.selectedItems() or [self.missed.item(i) for i in range(self.missed.count())]
        fids = sorted({item.data(FID_ROLE) for item in items if item.data(FID_ROLE) is not None})
        layer.selectByIds(fids)
        if self.iface is not None and fids:
            self.iface.mapCanvas().zoomToSelected(layer)
        return fids
