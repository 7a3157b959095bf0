"""The dock's Reasoning view: engine events, as the core's one renderer reads them, laid out as a tree of steps."""
from __future__ import annotations

from pathlib import Path

from qgis.PyQt.QtCore import QEvent, QObject, Qt
from qgis.PyQt.QtGui import QColor, QIcon, QPixmap
from qgis.PyQt.QtWidgets import QHeaderView, QTreeWidgetItem, QTreeWidgetItemIterator

from ..plugin.events import BAD, GOOD, NEUTRAL, STEP, SUFFIX, TOP, UNDER, WARN, Entry, describe
from ..plugin.labels import plural
from .text_fit import wrap_to_width

ZONES_ROLE = Qt.UserRole + 1  # on a step's item: the zone ids it marked (click to zoom)
FULL_TEXT_ROLE = Qt.UserRole + 3  # on every column of an item: its text before wrapping
FIRST_COLUMN = 210  # width of the Step column of lines under a step
MARGIN = 12  # pixels a cell's text keeps from its edges
COLOURS = {GOOD: "#1b5e20", BAD: "#b71c1c", WARN: "#e65100", NEUTRAL: "#5d4037"}


def tone_colour(tone: str) -> QColor | None:
    return QColor(COLOURS[tone]) if tone in COLOURS else None


class ReasoningView(QObject):
    """Fills the reasoning tree: one line per plan step, what happened to it under it, verdicts and votes after.
    Every text is word-wrapped to its column's width (again whenever the tree is resized); `full_text(item, col)`
    is the text before wrapping."""

    def __init__(self, tree):
        super().__init__(tree)
        self.tree = tree
        tree.setTextElideMode(Qt.ElideNone)
        tree.setUniformRowHeights(False)
        tree.header().setSectionResizeMode(0, QHeaderView.Interactive)
        tree.header().resizeSection(0, FIRST_COLUMN)
        tree.header().setStretchLastSection(True)
        tree.header().sectionResized.connect(lambda *_: self.rewrap())
        tree.viewport().installEventFilter(self)
        self._steps: dict = {}
        self._width = 0

    def eventFilter(self, watched, event):  # noqa: N802 (Qt API name)
        if event.type() == QEvent.Resize and self.tree.viewport().width() != self._width:
            self.rewrap()
        return False

    @staticmethod
    def full_text(item: QTreeWidgetItem, column: int) -> str:
        text = item.data(column, FULL_TEXT_ROLE)
        return item.text(column) if text is None else str(text)

    def column_width(self, item: QTreeWidgetItem, column: int) -> int:
        """The pixels a text of `item` may take in `column` (a spanned top-level line takes the whole row)."""
        viewport = self.tree.viewport().width()
        if item.parent() is None and item.isFirstColumnSpanned():
            width = viewport
        elif column == 0:
            width = self.tree.header().sectionSize(0) - self.tree.indentation()
        else:
            width = viewport - self.tree.header().sectionSize(0)
        if column == 0 and not item.icon(0).isNull():
            width -= self.tree.iconSize().width() + 4
        return max(width - MARGIN, 120)

    def set_text(self, item: QTreeWidgetItem, column: int, text: str) -> None:
        """Show `text` in a cell, wrapped to its width."""
        item.setData(column, FULL_TEXT_ROLE, text)
        item.setText(column, wrap_to_width(text, self.tree.fontMetrics(), self.column_width(item, column)))

    def rewrap(self) -> None:
        """Wrap every text again to the tree's present width."""
        self._width = self.tree.viewport().width()
        iterator = QTreeWidgetItemIterator(self.tree)
        while iterator.value():
            item = iterator.value()
            for column in range(item.columnCount()):
                if item.data(column, FULL_TEXT_ROLE) is not None:
                    self.set_text(item, column, str(item.data(column, FULL_TEXT_ROLE)))
            iterator += 1

    def clear(self) -> None:
        self.tree.clear()
        self._steps = {}

    def show(self, event: dict) -> None:
        """Add one engine event to the tree."""
        for entry in describe(event):
            if entry.place == STEP:
                item = self._step_item(entry.step)
                self.set_text(item, 0, entry.text)
                item.setToolTip(0, entry.tip)
            elif entry.place == SUFFIX:
                item = self._step_item(entry.step)
                self.set_text(item, 0, self.full_text(item, 0) + entry.text)
            elif entry.place == UNDER:
                self._under(entry)
            elif entry.place == TOP:
                self._top(entry)

    def _top(self, entry: Entry) -> None:
        item = QTreeWidgetItem()
        self._paint(item, entry, 0)
        item.setToolTip(0, entry.tip)
        self._add_top(item)
        self.set_text(item, 0, entry.text)
        for label, text in entry.rows:
            row = QTreeWidgetItem(item)
            self.set_text(row, 0, label)
            self.set_text(row, 1, text)
            row.setToolTip(1, text)
        item.setExpanded(entry.unfolded)

    def _under(self, entry: Entry) -> None:
        parent = self._step_item(entry.step)
        child = QTreeWidgetItem()
        child.setToolTip(1, entry.tip)
        self._paint(child, entry, 1 if entry.supports is None else 0)
        if entry.supports is not None:  # a step's observation: its zones, its image, its verdict on the parent
            for item in (child, parent):
                item.setData(0, ZONES_ROLE, entry.zone_ids)
            self._thumbnail(child, entry.image)
            parent.setToolTip(0, f"{self.full_text(parent, 0)}\n{plural(len(entry.zone_ids), 'zone')}; "
                                 f"{'supports' if entry.supports else 'does not support'} the answer")
            parent.setData(0, Qt.UserRole, entry.supports)
        parent.addChild(child)
        self.set_text(child, 0, entry.text)
        self.set_text(child, 1, entry.detail)
        parent.setExpanded(True)
        if entry.supports is not None:
            self.tree.scrollToItem(child)

    @staticmethod
    def _paint(item: QTreeWidgetItem, entry: Entry, column: int) -> None:
        colour = tone_colour(entry.tone)
        if colour is not None:
            item.setForeground(column, colour)

    @staticmethod
    def _thumbnail(item: QTreeWidgetItem, png: str) -> None:
        if png and Path(png).exists():
            pixmap = QPixmap(png)
            if not pixmap.isNull():
                item.setIcon(0, QIcon(pixmap.scaled(128, 128, Qt.KeepAspectRatio, Qt.SmoothTransformation)))
                item.setToolTip(0, f'<img src="{png}" width="360">')

    def _add_top(self, item: QTreeWidgetItem) -> QTreeWidgetItem:
        """A top-level line of the tree, its text across both columns."""
        self.tree.addTopLevelItem(item)
        item.setFirstColumnSpanned(True)
        return item

    def _step_item(self, index) -> QTreeWidgetItem:
        item = self._steps.get(index)
        if item is None:
            item = self._add_top(QTreeWidgetItem())
            self.set_text(item, 0, f"Step {index}")
            self._steps[index] = item
        return item
