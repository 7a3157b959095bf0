"""The dock's layer table: the project's evidence layers, each with a check box, a role and (rasters) a Low box;
every role shown whole, every layer up to SHOWN_ROWS without scrolling."""
from __future__ import annotations

from functools import partial
from pathlib import Path

from qgis.core import QgsCoordinateTransform, QgsProject, QgsRasterLayer, QgsVectorLayer, QgsWkbTypes
from qgis.PyQt.QtCore import QObject, Qt, pyqtSignal
from qgis.PyQt.QtWidgets import QComboBox, QHeaderView, QTreeWidgetItem

from ..plugin.labels import role_label
from ..plugin.request.request import evidence_spec
from ..plugin.roles import ROLES, guess_favourable
from ..processing.layer_export import guessed_role, layer_spec, source_file
from . import layers as result_layers
from .table_fit import name_tip

CHOOSE_ROLE = "(choose a role)"
SHOWN_ROWS = 10
"""Layers the table shows without scrolling (more scroll)."""
LOW_COLUMN = 2
LOW_SET_ROLE = Qt.UserRole + 2  # on the Low column: the user ticked or cleared it (no more guessing)
LOW_TIP = ("Tick when LOW values of this raster are favourable (e.g. distance to faults: near is good); "
           "pre-set for a structure layer named as a distance.")


def is_evidence_layer(layer) -> bool:
    """GDAL raster files, and line/polygon vectors (faults, units) of any source (a layer that is not a whole
    file, e.g. faults digitised in a scratch layer, is written to the run folder when a run starts); points are
    not evidence layers."""
    if not layer.isValid() or result_layers.is_result_layer(layer):
        return False
    if isinstance(layer, QgsRasterLayer):
        return layer.providerType() == "gdal" and source_file(layer) is not None
    if isinstance(layer, QgsVectorLayer):
        return layer.geometryType() in (QgsWkbTypes.LineGeometry, QgsWkbTypes.PolygonGeometry)
    return False


def project_layers_in_tree_order() -> list:
    """The project's layers as the Layers panel lists them (top first), then any not in the tree."""
    project = QgsProject.instance()
    in_tree = [node.layer() for node in project.layerTreeRoot().findLayers() if node.layer() is not None]
    seen = {layer.id() for layer in in_tree}
    return in_tree + [layer for layer in project.mapLayers().values() if layer.id() not in seen]


def first_disjoint_pair(layers) -> tuple | None:
    """The names of the first two layers whose extents do not meet (compared in the first layer's CRS), or None."""
    target = layers[0].crs()
    common = None
    for layer in layers:
        extent = layer.extent()
        if layer.crs().isValid() and target.isValid() and layer.crs() != target:
            try:
                extent = QgsCoordinateTransform(layer.crs(), target, QgsProject.instance()).transformBoundingBox(extent)
            except Exception:  # a failed transform (outside the CRS's area) is left to the engine's check
                continue
        if common is None:
            common = (layer.name(), extent)
        elif not common[1].intersects(extent):
            return common[0], layer.name()
        else:
            common = (common[0], common[1].intersect(extent))
    return None


class LayerTable(QObject):
    """The layer tree of the dock, kept in step with the project. `changed` is emitted whenever a check, a role or a
    Low box changes; `project_changed` when layers were added to or removed from the project (before the refresh)."""

    changed = pyqtSignal()
    project_changed = pyqtSignal()

    def __init__(self, tree):
        super().__init__(tree)
        self.tree = tree
        header = tree.header()
        tree.setTextElideMode(Qt.ElideMiddle)  # 'ASTER AlOH…(2003)' and 'ASTER ferric…(2003)' stay apart
        header.setSectionResizeMode(0, QHeaderView.Stretch)
        header.setStretchLastSection(False)  # the Low box needs its own width only: the names get the rest
        header.setSectionResizeMode(1, QHeaderView.Fixed)  # as wide as the longest role chosen (`_fit_roles`)
        header.setSectionResizeMode(LOW_COLUMN, QHeaderView.ResizeToContents)
        tree.headerItem().setToolTip(LOW_COLUMN, LOW_TIP)
        tree.itemChanged.connect(self._item_changed)
        for signal in self._project_signals():
            signal.connect(self._project_layers_changed)

    @staticmethod
    def _project_signals() -> tuple:
        project = QgsProject.instance()
        return project.layersAdded, project.layersRemoved, project.cleared

    def _project_layers_changed(self, *_) -> None:
        self.project_changed.emit()
        self.refresh()

    def stop_following(self) -> None:
        """Stop following the project (the dock is going away)."""
        for signal in self._project_signals():
            try:
                signal.disconnect(self._project_layers_changed)
            except (TypeError, RuntimeError):
                pass

    def refresh(self) -> None:
        """List the project's evidence layers, keeping check states, roles and Low ticks already set."""
        previous = {row["id"]: (row["item"].checkState(0), row["combo"].currentData()) for row in self.rows()}
        previous_low = {row["id"]: row["item"].checkState(LOW_COLUMN) for row in self.rows()
                        if row["item"].data(LOW_COLUMN, LOW_SET_ROLE)}
        tree = self.tree
        tree.blockSignals(True)
        tree.clear()
        for layer in project_layers_in_tree_order():
            if not is_evidence_layer(layer):
                continue
            item = QTreeWidgetItem([layer.name(), ""])
            item.setData(0, Qt.UserRole, layer.id())
            item.setFlags(item.flags() | Qt.ItemIsUserCheckable)
            item.setToolTip(0, name_tip(layer.name(), layer.publicSource()))  # no database password
            checked, role = previous.get(layer.id(), (Qt.Checked, ""))
            item.setCheckState(0, checked)
            tree.addTopLevelItem(item)
            combo = QComboBox(tree)
            combo.setSizeAdjustPolicy(QComboBox.AdjustToContents)
            combo.addItem(CHOOSE_ROLE, CHOOSE_ROLE)
            for key in ROLES:
                combo.addItem(role_label(key), key)
                combo.setItemData(combo.count() - 1, key, Qt.ToolTipRole)
            if not role:
                guess = guessed_role(layer)
                role = guess if guess != "other" else CHOOSE_ROLE
            combo.setCurrentIndex(max(0, combo.findData(role)))
            combo.currentIndexChanged.connect(partial(self._role_changed, layer.id()))
            tree.setItemWidget(item, 1, combo)
            if isinstance(layer, QgsRasterLayer):  # vectors get no Low box: they have no values to rank
                item.setToolTip(LOW_COLUMN, LOW_TIP)
                if layer.id() in previous_low:
                    item.setCheckState(LOW_COLUMN, previous_low[layer.id()])
                    item.setData(LOW_COLUMN, LOW_SET_ROLE, True)
                else:
                    self._guess_low(item, layer, role)
        tree.blockSignals(False)
        self._fit_height()
        self._fit_roles()
        self.changed.emit()

    def _fit_roles(self) -> None:
        """The Role column as wide as the longest role chosen, so every chosen role reads whole (the list shows all
        of them whole), the names taking the rest."""
        combos = [row["combo"] for row in self.rows()]
        if not combos:
            return
        metrics = combos[0].fontMetrics()
        widest = max((combos[0].itemText(i) for i in range(combos[0].count())), key=metrics.horizontalAdvance)
        frame = combos[0].sizeHint().width() - metrics.horizontalAdvance(widest)  # the arrow, frame and margins
        shown = max(metrics.horizontalAdvance(combo.currentText()) for combo in combos)
        self.tree.header().resizeSection(1, shown + max(frame, 24) + 4)

    def _fit_height(self) -> None:
        """Tall enough for every layer up to SHOWN_ROWS (the sample's six were cut to five, the sixth scrolled)."""
        tree = self.tree
        rows = min(max(tree.topLevelItemCount(), 1), SHOWN_ROWS)
        row = max(tree.sizeHintForRow(0), tree.fontMetrics().height() + 8) if tree.topLevelItemCount() else 24
        tree.setMinimumHeight(tree.header().sizeHint().height() + rows * row + 2 * tree.frameWidth() + 4)

    @staticmethod
    def _guess_low(item: QTreeWidgetItem, layer, role: str) -> None:
        low = guess_favourable(source_file(layer) or Path(layer.name()), role, layer.name()) == "low"
        item.setCheckState(LOW_COLUMN, Qt.Checked if low else Qt.Unchecked)

    def _role_changed(self, layer_id: str, *_) -> None:
        """A new role re-guesses the Low box of a raster, unless the user already set it; the Role column fits it."""
        self._fit_roles()
        row = self.row(layer_id)
        item = row["item"]
        if isinstance(row["layer"], QgsRasterLayer) and not item.data(LOW_COLUMN, LOW_SET_ROLE):
            self.tree.blockSignals(True)
            self._guess_low(item, row["layer"], row["combo"].currentData())
            self.tree.blockSignals(False)
        self.changed.emit()

    def _item_changed(self, item: QTreeWidgetItem, column: int) -> None:
        if column == LOW_COLUMN:
            item.setData(LOW_COLUMN, LOW_SET_ROLE, True)
        self.changed.emit()

    def rows(self) -> list[dict]:
        """One dict per listed layer: id, item, combo, layer."""
        rows = []
        for i in range(self.tree.topLevelItemCount()):
            item = self.tree.topLevelItem(i)
            layer_id = item.data(0, Qt.UserRole)
            rows.append({"id": layer_id, "item": item, "combo": self.tree.itemWidget(item, 1),
                         "layer": QgsProject.instance().mapLayer(layer_id)})
        return rows

    def row(self, layer_id: str) -> dict:
        for row in self.rows():
            if row["id"] == layer_id:
                return row
        raise KeyError(f"layer {layer_id} is not listed in the dock")

    def checked_rows(self) -> list[dict]:
        return [r for r in self.rows() if r["item"].checkState(0) == Qt.Checked and r["layer"] is not None]

    def set_checked(self, layer_id: str, checked: bool) -> None:
        self.row(layer_id)["item"].setCheckState(0, Qt.Checked if checked else Qt.Unchecked)

    def set_role(self, layer_id: str, role: str) -> None:
        """Choose a role (its key, e.g. 'structure', or CHOOSE_ROLE), as the user would pick its label."""
        combo = self.row(layer_id)["combo"]
        index = combo.findData(role)
        if index < 0:
            raise KeyError(f"unknown role {role!r}")
        combo.setCurrentIndex(index)

    def role(self, layer_id: str) -> str:
        """The role key chosen for a layer (CHOOSE_ROLE when none)."""
        return self.row(layer_id)["combo"].currentData()

    def set_favourable_low(self, layer_id: str, low: bool) -> None:
        """Tick or clear a raster's Low box, as the user would."""
        self.row(layer_id)["item"].setCheckState(LOW_COLUMN, Qt.Checked if low else Qt.Unchecked)

    def favourable(self, layer_id: str) -> str | None:
        """'low' or 'high' as the Low box of a raster says; None for a vector layer (no box)."""
        row = self.row(layer_id)
        if not isinstance(row["layer"], QgsRasterLayer):
            return None
        return "low" if row["item"].checkState(LOW_COLUMN) == Qt.Checked else "high"

    def problem(self) -> str:
        """What stops a run in the layer choice, said as what to do; '' when it is complete."""
        rows = self.checked_rows()
        if not rows:
            return "Check at least one raster layer in the Layers list (add rasters to the project first if none)."
        if not any(isinstance(r["layer"], QgsRasterLayer) for r in rows):
            return "Check at least one raster layer: vector layers (faults, units) need a raster to define the area."
        unset = [r["layer"].name() for r in rows if r["combo"].currentData() == CHOOSE_ROLE]
        if unset:
            return f"Choose a role for {', '.join(unset)} in the Role column."
        names = [r["layer"].name() for r in rows]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            return f"Two checked layers are both called {', '.join(duplicates)}; rename one in the Layers panel."
        disjoint = first_disjoint_pair([r["layer"] for r in rows])
        if disjoint:
            return f"{disjoint[0]} and {disjoint[1]} do not overlap; check only layers that cover a common area."
        return ""

    def specs(self, folder) -> list:
        """The checked layers as analysis layers (a layer that is not a whole file is written into `folder`)."""
        return [layer_spec(r["layer"], r["combo"].currentData(), folder, self.favourable(r["id"]))
                for r in self.checked_rows()]

    def named_specs(self) -> list:
        """The checked layers with a role as analysis layers named as the request will name them, without writing
        anything (for checks while the user types: a layer that is not a whole file gets a placeholder path)."""
        return [evidence_spec(source_file(r["layer"]) or Path(r["layer"].name()), r["combo"].currentData(),
                              r["layer"].name(), self.favourable(r["id"]))
                for r in self.checked_rows() if r["combo"].currentData() != CHOOSE_ROLE]
