"""Check and correct the legend read from a map image: a table of each unit's colour, name and share of the map, the
names and colours editable; Apply writes the corrections and classifies the map again (in a background task), and
the unit layer in the project follows, coloured and labelled as the legend says.

Opened from the dock's Legend... button on the map image selected in its layer list (or the active layer)."""
from __future__ import annotations

from pathlib import Path

from qgis.core import QgsPalettedRasterRenderer, QgsProject, QgsRasterLayer, QgsTask
from qgis.PyQt.QtCore import Qt, pyqtSignal
from qgis.PyQt.QtGui import QColor
from qgis.PyQt.QtWidgets import (
    QColorDialog,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QToolButton,
    QVBoxLayout,
)

from ..plugin.csv_table import write_csv
from ..plugin.errors import LodestarError
from ..plugin.progress import Progress
from ..plugin.tools.map_legend import LegendOutputs, LegendReading, classify_map, read_map_legend
from ..processing.layer_export import source_file
from .settings_dialog import PluginSettings, slug
from .task import guarded, start

HEADERS = ("Code", "Colour", "Name", "Share of map")
COLOUR, NAME = 1, 2
LAYER_SUFFIX = " (units)"


class LegendTask(QgsTask):
    """Reads a map image's legend (`image` given) or classifies it again with corrections, off the main thread; emits
    `succeeded(reading)` or `failed(message)` from `finished()` on the main thread."""

    succeeded = pyqtSignal(object)
    failed = pyqtSignal(str)

    def __init__(self, outputs: LegendOutputs, image=None, reading: LegendReading | None = None, corrections=None):
        super().__init__("Lodestar: map legend", QgsTask.CanCancel)
        self.outputs, self.image, self.reading, self.corrections = outputs, image, reading, corrections
        self.result: LegendReading | None = None
        self.error = ""

    def run(self) -> bool:
        progress = Progress(on_progress=self.setProgress, is_cancelled=self.isCanceled)

        def work():
            if self.reading is None:
                self.result = read_map_legend(self.image, self.outputs, progress=progress)
            else:
                self.result = classify_map(self.reading, self.outputs, self.corrections, progress=progress)

        return guarded(self, "Reading the legend", work)

    def finished(self, ok: bool) -> None:
        if ok and self.result is not None:
            self.succeeded.emit(self.result)
        elif not self.isCanceled():
            self.failed.emit(self.error or "The legend was not read.")


class LegendEditor(QDialog):
    """The table of a reading's units. Public for tests: `table`, `note`, `reading`, `task`, `layer`, `set_colour`,
    `corrections`, `apply`."""

    def __init__(self, outputs: LegendOutputs, parent=None):
        super().__init__(parent)
        self.setWindowTitle("Lodestar: check the map legend")
        self.outputs = outputs
        self.reading: LegendReading | None = None
        self.task: LegendTask | None = None
        self.layer: QgsRasterLayer | None = None
        self.note = QLabel("Reading the legend...", self)
        self.note.setWordWrap(True)
        self.table = QTableWidget(0, len(HEADERS), self)
        self.table.setHorizontalHeaderLabels(HEADERS)
        self.table.horizontalHeader().setSectionResizeMode(NAME, QHeaderView.Stretch)
        self.table.cellDoubleClicked.connect(self._cell_double_clicked)
        self.buttons = QDialogButtonBox(QDialogButtonBox.Apply | QDialogButtonBox.Close, self)
        self.buttons.button(QDialogButtonBox.Apply).setToolTip("Write the corrections and classify the map again")
        self.buttons.button(QDialogButtonBox.Apply).clicked.connect(self.apply)
        self.buttons.rejected.connect(self.close)
        layout = QVBoxLayout(self)
        for widget in (self.note, self.table, self.buttons):
            layout.addWidget(widget)
        self.resize(520, 420)

    # ----- reading and showing
    def read(self, image) -> LegendTask:
        """Read the legend of a map image in a background task; the table fills when it is done."""
        return self._start(LegendTask(self.outputs, image=image))

    def show_reading(self, reading: LegendReading) -> None:
        """Fill the table from a reading, and show its unit layer in the project."""
        self.reading = reading
        self.table.blockSignals(True)
        self.table.setRowCount(len(reading.units))
        for row, unit in enumerate(reading.units):
            code = QTableWidgetItem(str(unit.value))
            code.setFlags(code.flags() & ~Qt.ItemIsEditable)
            share = QTableWidgetItem(f"{100 * unit.share:.1f} %")
            share.setFlags(share.flags() & ~Qt.ItemIsEditable)
            name = QTableWidgetItem(unit.name)
            name.setToolTip(f"Read: {unit.ocr_text!r} (confidence {unit.ocr_confidence})" if unit.ocr_text else
                            "Added by a correction")
            for column, item in ((0, code), (NAME, name), (3, share)):
                self.table.setItem(row, column, item)
            self.table.setItem(row, COLOUR, QTableWidgetItem())
            self._paint(row, unit.rgb)
        self.table.blockSignals(False)
        counts = reading.counts
        fixed = f"; {len(reading.corrections)} correction(s) applied" if reading.corrections else ""
        self.note.setText(f"{len(reading.units)} units, {counts.get('classified', 0)} pixels classified; lines and "
                          f"lettering ({counts.get('ink', 0)} px), paper and the legend box left as nodata{fixed}. "
                          "Check the names and colours against the map; double-click a colour to change it.")
        self._show_layer(reading)

    def _paint(self, row: int, rgb) -> None:
        item = self.table.item(row, COLOUR)
        item.setBackground(QColor(*rgb))
        item.setText("#{:02x}{:02x}{:02x}".format(*rgb))
        item.setData(Qt.UserRole, tuple(int(c) for c in rgb))
        item.setFlags(item.flags() & ~Qt.ItemIsEditable)

    def set_colour(self, row: int, rgb) -> None:
        """Set a unit's colour (what the colour dialog does)."""
        self._paint(row, rgb)

    def _cell_double_clicked(self, row: int, column: int) -> None:
        if column != COLOUR:
            return
        colour = QColorDialog.getColor(QColor(*self.table.item(row, COLOUR).data(Qt.UserRole)), self, "Unit colour")
        if colour.isValid():
            self.set_colour(row, (colour.red(), colour.green(), colour.blue()))

    # ----- correcting
    def corrections(self) -> dict:
        """The table's names and colours that differ from what was read, by unit code."""
        out = {}
        for row, unit in enumerate(self.reading.units if self.reading else []):
            name = self.table.item(row, NAME).text().strip()
            rgb = tuple(self.table.item(row, COLOUR).data(Qt.UserRole))
            change = {}
            if name and name != (unit.read_name or unit.name):
                change["name"] = name
            if unit.read_rgb is None or rgb != tuple(unit.read_rgb):
                change["rgb"] = rgb
            if change:
                out[unit.value] = change
        return out

    def apply(self) -> LegendTask | None:
        """Write the corrections CSV beside the legend and classify the map again with them (a background task)."""
        if self.reading is None or self.task is not None:
            return None
        corrections = self.corrections()
        path = self.outputs.raster.with_name(f"{self.outputs.raster.stem}_corrections.csv")
        rows = [{"value": value, "name": change.get("name", ""), "r": change.get("rgb", ("", "", ""))[0],
                 "g": change.get("rgb", ("", "", ""))[1], "b": change.get("rgb", ("", "", ""))[2]}
                for value, change in sorted(corrections.items())]
        try:
            write_csv(path, ("value", "name", "r", "g", "b"), rows)
        except LodestarError as exc:
            self.note.setText(str(exc))
            return None
        self.note.setText(f"Classifying the map again with {len(corrections)} correction(s) ({path.name})...")
        return self._start(LegendTask(self.outputs, reading=self.reading, corrections=path if rows else None))

    # ----- the task and the layer
    def _start(self, task: LegendTask) -> LegendTask:
        self.task = task
        self.buttons.button(QDialogButtonBox.Apply).setEnabled(False)
        task.succeeded.connect(self._done)
        task.failed.connect(self._failed)
        start(task)
        return task

    def _done(self, reading: LegendReading) -> None:
        self.task = None
        self.buttons.button(QDialogButtonBox.Apply).setEnabled(True)
        self.show_reading(reading)

    def _failed(self, message: str) -> None:
        self.task = None
        self.buttons.button(QDialogButtonBox.Apply).setEnabled(self.reading is not None)
        self.note.setText(message)

    def _show_layer(self, reading: LegendReading) -> None:
        """The unit raster in the project (replacing the previous one: the file was rewritten), each unit in its
        colour and labelled with its name."""
        project = QgsProject.instance()
        if self.layer is not None and project.mapLayer(self.layer.id()) is not None:
            project.removeMapLayer(self.layer.id())
        layer = QgsRasterLayer(str(self.outputs.raster), Path(reading.source).stem + LAYER_SUFFIX)
        if not layer.isValid():
            self.note.setText(f"{self.outputs.raster} could not be loaded.")
            self.layer = None
            return
        classes = [QgsPalettedRasterRenderer.Class(u.value, QColor(*u.rgb), u.name) for u in reading.units]
        layer.setRenderer(QgsPalettedRasterRenderer(layer.dataProvider(), 1, classes))
        project.addMapLayer(layer)
        self.layer = layer

    def closeEvent(self, event):  # noqa: N802 (Qt API name)
        if self.task is not None:
            self.task.cancel()
        super().closeEvent(event)


def open_editor(image_layer, parent=None) -> LegendEditor:
    """Read the legend of a map image layer into `<runs folder>/legends/` and show the editor (non-modal)."""
    image = source_file(image_layer) if isinstance(image_layer, QgsRasterLayer) else None
    if image is None or image_layer.bandCount() not in (3, 4):
        raise LodestarError("Select a map image (a raster file of 3 or 4 bands: RGB or RGBA) in the layer list, "
                            "then click Legend... again.")
    folder = PluginSettings.load().runs_folder() / "legends"
    outputs = LegendOutputs.beside(folder / f"{slug(image_layer.name())}_units.tif")
    editor = LegendEditor(outputs, parent)
    editor.read(image)
    editor.show()
    return editor


def add_legend_button(dock) -> QToolButton:
    """A Legend... button beside the dock's layer list that opens the editor on the selected map image."""
    button = QToolButton(dock.body)
    button.setObjectName("legendButton")
    button.setText("Legend...")
    button.setToolTip("Read the legend of the selected map image (a scanned geological map) into a unit map, and "
                      "check or correct its names and colours")

    def clicked(*_):
        item = dock.ui.layerTree.currentItem()
        layer = QgsProject.instance().mapLayer(item.data(0, Qt.UserRole)) if item is not None else None
        layer = layer or dock.iface.activeLayer()
        try:
            dock.legend_editor = open_editor(layer, dock)
        except LodestarError as exc:
            dock.ui.messageBar.pushWarning("Lodestar", str(exc))

    button.clicked.connect(clicked)
    dock.ui.layersHeader.addWidget(button)
    return button
