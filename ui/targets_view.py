"""The Targets page of the Results tab: the run's targets as a sortable table, with zoom to, select on the map and
export of the selected targets."""
from __future__ import annotations

from pathlib import Path

from qgis.core import QgsCoordinateTransform, QgsProject, QgsRectangle
from qgis.PyQt.QtCore import Qt
from qgis.PyQt.QtWidgets import (
    QAbstractItemView,
    QFileDialog,
    QHBoxLayout,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ..plugin.errors import LodestarError
from ..plugin.vector_io import write_vector

COLUMNS = (("rank", "Rank"), ("tier", "Tier (%)"), ("area_km2", "Area (km²)"), ("verdict", "Verdict"),
           ("known_deps", "Known deposits"), ("exp_deps", "Expected deposits"), ("fav_p90", "Favourability (p90)"),
           ("layers", "Strongest evidence"), ("why", "Why"))
"""(field, header) of the table's columns, in order."""
COUNTS = ("rank", "known_deps")
"""Fields that count (shown whole: a layer read back stores them as reals)."""


TABLE_MIN_HEIGHT = 180
"""Enough for the best five targets without scrolling (the page takes it from the dock's other pages)."""


class TargetsView:
    """A 'Targets' page added to the results tool box (`toolbox`); `iface` gives the map canvas."""

    def __init__(self, toolbox, iface):
        self.iface = iface
        self.targets = None
        self.layer = None
        self.page = QWidget()
        self.page.setObjectName("targetsPage")
        layout = QVBoxLayout(self.page)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels([header for _, header in COLUMNS])
        self.table.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.table.setSortingEnabled(True)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.setMinimumHeight(TABLE_MIN_HEIGHT)
        self.table.itemDoubleClicked.connect(lambda _item: self.zoom_to_selected())
        layout.addWidget(self.table)
        buttons = QHBoxLayout()
        self.zoom_button = QPushButton("Zoom to")
        self.select_button = QPushButton("Select on map")
        self.export_button = QPushButton("Export selected…")
        self.zoom_button.clicked.connect(self.zoom_to_selected)
        self.select_button.clicked.connect(self.select_on_map)
        self.export_button.clicked.connect(self._ask_export)
        for button in (self.zoom_button, self.select_button, self.export_button):
            buttons.addWidget(button)
        layout.addLayout(buttons)
        self.index = toolbox.addItem(self.page, "Targets")
        self.show(None, None)

    def show(self, targets, layer) -> None:
        """The targets (a GeoDataFrame, None to clear), and their layer in the project (None when not added)."""
        self.targets, self.layer = targets, layer
        table = self.table
        table.setSortingEnabled(False)
        rows = [] if targets is None else list(targets.sort_values("rank").to_dict("records"))
        table.setRowCount(len(rows))
        for r, row in enumerate(rows):
            for c, (field, _) in enumerate(COLUMNS):
                item = QTableWidgetItem()
                value = row.get(field)
                if isinstance(value, (int, float)) and value == value:
                    item.setData(Qt.DisplayRole, int(value) if field in COUNTS else round(float(value), 3))
                else:
                    item.setData(Qt.DisplayRole, "" if value is None or value != value else str(value))
                if field in ("why", "layers"):
                    item.setToolTip(str(value or ""))
                table.setItem(r, c, item)
        table.setSortingEnabled(True)
        table.sortItems(0, Qt.AscendingOrder)  # best first until the user sorts otherwise
        table.resizeColumnsToContents()
        for button in (self.zoom_button, self.select_button, self.export_button):
            button.setEnabled(bool(rows))

    def selected_ranks(self) -> list[int]:
        """The ranks of the selected rows, in table order."""
        rows = sorted({index.row() for index in self.table.selectedIndexes()})
        return [int(self.table.item(r, 0).data(Qt.DisplayRole)) for r in rows]

    def selected_targets(self):
        ranks = self.selected_ranks()
        if self.targets is None or not ranks:
            raise LodestarError("Select one or more targets in the table first.")
        return self.targets[self.targets["rank"].isin(ranks)].sort_values("rank")

    def zoom_to_selected(self) -> bool:
        """Zoom the map canvas to the selected targets (in the canvas's CRS); False when none is selected."""
        if not self.selected_ranks() or self.targets is None:
            return False
        xmin, ymin, xmax, ymax = self.selected_targets().total_bounds
        extent = QgsRectangle(xmin, ymin, xmax, ymax)
        canvas = self.iface.mapCanvas()
        if self.layer is not None and self.layer.crs() != canvas.mapSettings().destinationCrs():
            transform = QgsCoordinateTransform(self.layer.crs(), canvas.mapSettings().destinationCrs(),
                                               QgsProject.instance())
            extent = transform.transformBoundingBox(extent)
        extent.scale(1.2)
        canvas.setExtent(extent)
        canvas.refresh()
        return True

    def select_on_map(self) -> int:
        """Select the selected targets' features in the targets layer; how many were selected."""
        if self.layer is None or not self.selected_ranks():
            return 0
        ranks = ", ".join(str(r) for r in self.selected_ranks())
        self.layer.selectByExpression(f'"rank" IN ({ranks})')
        return self.layer.selectedFeatureCount()

    def export_selection(self, path) -> Path:
        """Write the selected targets, every field, to `path` (a Shapefile or a GeoPackage, by its suffix)."""
        path = Path(path)
        if path.suffix.lower() not in (".shp", ".gpkg"):
            raise LodestarError(f"Export the targets to a .shp or .gpkg file, not {path.name}.")
        return write_vector(self.selected_targets(), path)

    def _ask_export(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self.page, "Export the selected targets", "targets.gpkg",
                                              "GeoPackage (*.gpkg);;Shapefile (*.shp)")
        if not path:
            return
        try:
            written = self.export_selection(path)
        except LodestarError as exc:
            self.iface.messageBar().pushWarning("Lodestar", str(exc))
            return
        self.iface.messageBar().pushSuccess("Lodestar", f"{len(self.selected_ranks())} target(s) written to {written}")
