"""The Targets page of the Results tab: the run's targets as a sortable tree, each target holding its prospects, with
zoom to, select on the map and export of the selected targets (and their prospects)."""
from __future__ import annotations

from pathlib import Path

from qgis.core import QgsCoordinateTransform, QgsProject, QgsRectangle
from qgis.PyQt.QtCore import Qt
from qgis.PyQt.QtWidgets import (
    QAbstractItemView,
    QFileDialog,
    QHBoxLayout,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ..plugin.errors import LodestarError
from ..plugin.labels import plural
from ..plugin.vector_io import shapefile_note, write_vector

COLUMNS = (("rank", "Rank"), ("tier", "Tier (%)"), ("area_km2", "Area (km²)"), ("verdict", "Verdict"),
           ("known_deps", "Known deposits"), ("exp_deps", "Expected deposits"), ("score", "Per km²"),
           ("fav_p90", "Favourability (p90)"), ("prospects", "Prospects"), ("layers", "Strongest evidence"),
           ("why", "Why"))
"""(field, header) of the tree's columns, in order: a target's row, its prospects' rows under it (their rank is
their rank inside the target)."""
COUNTS = ("rank", "known_deps", "prospects")
"""Fields that count (shown whole: a layer read back stores them as reals)."""
PROSPECT_ROLE = Qt.UserRole + 1
"""Item data of a prospect's row: its target's rank (None on a target's row)."""


TABLE_MIN_HEIGHT = 180
"""Enough for the best five targets without scrolling (the page takes it from the dock's other pages)."""


class TargetsView:
    """A 'Targets' page added to the results tool box (`toolbox`); `iface` gives the map canvas."""

    def __init__(self, toolbox, iface):
        self.iface = iface
        self.targets = self.prospects = None
        self.layer = self.prospects_layer = None
        self.page = QWidget()
        self.page.setObjectName("targetsPage")
        layout = QVBoxLayout(self.page)
        self.tree = QTreeWidget()
        self.tree.setColumnCount(len(COLUMNS))
        self.tree.setHeaderLabels([header for _, header in COLUMNS])
        self.tree.setSelectionMode(QAbstractItemView.ExtendedSelection)
        self.tree.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.tree.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.tree.setSortingEnabled(True)
        self.tree.setMinimumHeight(TABLE_MIN_HEIGHT)
        self.tree.itemDoubleClicked.connect(lambda _item, _column: self.zoom_to_selected())
        layout.addWidget(self.tree)
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

    def show(self, targets, layer, prospects=None, prospects_layer=None) -> None:
        """The targets (a GeoDataFrame, None to clear) and the prospects inside them (their `camp`: the target's
        rank), with their layers in the project (None when not added)."""
        self.targets, self.layer = targets, layer
        self.prospects, self.prospects_layer = prospects, prospects_layer
        tree = self.tree
        tree.setSortingEnabled(False)
        tree.clear()
        rows = [] if targets is None else list(targets.sort_values("rank").to_dict("records"))
        inside = {}
        if prospects is not None and len(prospects):
            for row in prospects.sort_values(["camp", "rank"]).to_dict("records"):
                inside.setdefault(int(row["camp"]), []).append(row)
        for row in rows:
            item = _item(row, None)
            tree.addTopLevelItem(item)
            for prospect in inside.get(int(row["rank"]), []):
                item.addChild(_item(prospect, int(row["rank"])))
        tree.setSortingEnabled(True)
        tree.sortItems(0, Qt.AscendingOrder)  # best first until the user sorts otherwise
        for column in range(len(COLUMNS) - 1):
            tree.resizeColumnToContents(column)
        for button in (self.zoom_button, self.select_button, self.export_button):
            button.setEnabled(bool(rows))

    def selected_ranks(self) -> list[int]:
        """The ranks of the selected targets (a selected prospect's target is not counted), in the tree's order."""
        return [int(item.data(0, Qt.DisplayRole)) for item in self._selected() if item.data(0, PROSPECT_ROLE) is None]

    def selected_prospects(self) -> list[tuple[int, int]]:
        """(target rank, prospect rank) of the selected prospects."""
        return [(int(item.data(0, PROSPECT_ROLE)), int(item.data(0, Qt.DisplayRole))) for item in self._selected()
                if item.data(0, PROSPECT_ROLE) is not None]

    def selected_targets(self):
        ranks = self.selected_ranks()
        if self.targets is None or not ranks:
            raise LodestarError("Select one or more targets in the list first.")
        return self.targets[self.targets["rank"].isin(ranks)].sort_values("rank")

    def zoom_to_selected(self) -> bool:
        """Zoom the map canvas to the selected targets and prospects (in the canvas's CRS); False when none is
        selected."""
        frames = []
        if self.targets is not None and self.selected_ranks():
            frames.append(self.selected_targets())
        picked = self.selected_prospects()
        if self.prospects is not None and picked:
            frames.append(self.prospects[[(int(c), int(r)) in picked for c, r in
                                          zip(self.prospects["camp"], self.prospects["rank"])]])
        if not frames:
            return False
        bounds = [frame.total_bounds for frame in frames]
        extent = QgsRectangle(min(b[0] for b in bounds), min(b[1] for b in bounds), max(b[2] for b in bounds),
                              max(b[3] for b in bounds))
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
        """Select the selected targets' features in the targets layer and the selected prospects' in the prospects
        layer; how many were selected."""
        count = 0
        if self.layer is not None and self.selected_ranks():
            ranks = ", ".join(str(r) for r in self.selected_ranks())
            self.layer.selectByExpression(f'"rank" IN ({ranks})')
            count += self.layer.selectedFeatureCount()
        if self.prospects_layer is not None and self.selected_prospects():
            picked = " OR ".join(f'("camp" = {c} AND "rank" = {r})' for c, r in self.selected_prospects())
            self.prospects_layer.selectByExpression(picked)
            count += self.prospects_layer.selectedFeatureCount()
        return count

    def export_selection(self, path) -> list[Path]:
        """Write the selected targets, every field, to `path` (a Shapefile or a GeoPackage, by its suffix), and
        their prospects beside it (`prospects_path`) when they hold any; the files written."""
        path = Path(path)
        if path.suffix.lower() not in (".shp", ".gpkg"):
            raise LodestarError(f"Export the targets to a .shp or .gpkg file, not {path.name}.")
        targets = self.selected_targets()
        written = [write_vector(targets, path)]
        if self.prospects is not None and len(self.prospects):
            inside = self.prospects[self.prospects["camp"].isin(targets["rank"])]
            if len(inside):
                written.append(write_vector(inside, prospects_path(path)))
        return written

    def export_note(self, path) -> str:
        """What exporting the selection to `path` cuts ('' when nothing: `vector_io.shapefile_note`)."""
        return shapefile_note(self.selected_targets(), path)

    def _selected(self) -> list:
        """The selected rows, in the tree's order (targets, each followed by its prospects)."""
        chosen = set(id(item) for item in self.tree.selectedItems())
        out = []
        for index in range(self.tree.topLevelItemCount()):
            item = self.tree.topLevelItem(index)
            out += [item] if id(item) in chosen else []
            out += [item.child(k) for k in range(item.childCount()) if id(item.child(k)) in chosen]
        return out

    def _ask_export(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self.page, "Export the selected targets", "targets.gpkg",
                                              "GeoPackage (*.gpkg);;Shapefile (*.shp)")
        if not path:
            return
        try:
            note = self.export_note(path)
            written = self.export_selection(path)
        except LodestarError as exc:
            self.iface.messageBar().pushWarning("Lodestar", str(exc))
            return
        also = f" and their prospects to {written[1]}" if len(written) > 1 else ""
        self.iface.messageBar().pushSuccess("Lodestar", f"{plural(len(self.selected_ranks()), 'target')} written to "
                                                        f"{written[0]}{also}. {note}".strip())


def prospects_path(path) -> Path:
    """Where the prospects of targets exported to `path` are written: beside it, `<name>_prospects` of its kind."""
    path = Path(path)
    return path.with_name(f"{path.stem}_prospects{path.suffix}")


def _item(row: dict, camp: int | None) -> QTreeWidgetItem:
    """A tree row of a target (`camp` None) or of a prospect of target `camp`."""
    item = QTreeWidgetItem()
    for c, (field, _) in enumerate(COLUMNS):
        value = row.get(field)
        if isinstance(value, (int, float)) and value == value:
            item.setData(c, Qt.DisplayRole, int(value) if field in COUNTS else round(float(value), 3))
        else:
            item.setData(c, Qt.DisplayRole, "" if value is None or value != value else str(value))
        if field in ("why", "layers"):
            item.setToolTip(c, str(value or ""))
    item.setData(0, PROSPECT_ROLE, camp)
    return item
