"""The dock's Reasoning view: engine events, as the core's one renderer reads them, laid out as a tree of steps."""
from __future__ import annotations

from pathlib import Path

from qgis.PyQt.QtCore import Qt
from qgis.PyQt.QtGui import QColor, QIcon, QPixmap
from qgis.PyQt.QtWidgets import QHeaderView, QTreeWidgetItem

from ..plugin.events import BAD, GOOD, NEUTRAL, STEP, SUFFIX, TOP, UNDER, WARN, Entry, describe

ZONES_ROLE = Qt.UserRole + 1  # on a step's item: the zone ids it marked (click to zoom)
COLOURS = {GOOD: "#1b5e20", BAD: "#b71c1c", WARN: "#e65100", NEUTRAL: "#5d4037"}


def tone_colour(tone: str) -> QColor | None:
    return QColor(COLOURS[tone]) if tone in COLOURS else None


class ReasoningView:
    """Fills the reasoning tree: one line per plan step, what happened to it under it, verdicts and votes after."""

    def __init__(self, tree):
        self.tree = tree
        tree.header().setSectionResizeMode(0, QHeaderView.Interactive)
        tree.header().resizeSection(0, 210)
        tree.header().setStretchLastSection(True)
        self._steps: dict = {}

    def clear(self) -> None:
        self.tree.clear()
        self._steps = {}

    def show(self, event: dict) -> None:
        """Add one engine event to the tree."""
        for entry in describe(event):
            if entry.place == STEP:
                item = self._step_item(entry.step)
                item.setText(0, entry.text)
                item.setToolTip(0, entry.tip)
            elif entry.place == SUFFIX:
                item = self._step_item(entry.step)
                item.setText(0, item.text(0) + entry.text)
            elif entry.place == UNDER:
                self._under(entry)
            elif entry.place == TOP:
                self._top(entry)

    def _top(self, entry: Entry) -> None:
        item = QTreeWidgetItem([entry.text])
        self._paint(item, entry, 0)
        item.setToolTip(0, entry.tip)
        for label, text in entry.rows:
            row = QTreeWidgetItem(item, [label, text])
            row.setToolTip(1, text)
        self._add_top(item)
        item.setExpanded(entry.unfolded)

    def _under(self, entry: Entry) -> None:
        parent = self._step_item(entry.step)
        child = QTreeWidgetItem([entry.text, entry.detail])
        child.setToolTip(1, entry.tip)
        self._paint(child, entry, 1 if entry.supports is None else 0)
        if entry.supports is not None:  # a step's observation: its zones, its image, its verdict on the parent
            for item in (child, parent):
                item.setData(0, ZONES_ROLE, entry.zone_ids)
            self._thumbnail(child, entry.image)
            parent.setToolTip(0, f"{parent.text(0)}\n{len(entry.zone_ids)} zones; "
                                 f"{'supports' if entry.supports else 'does not support'} the answer")
            parent.setData(0, Qt.UserRole, entry.supports)
        parent.addChild(child)
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
            item = self._add_top(QTreeWidgetItem([f"Step {index}", ""]))
            self._steps[index] = item
        return item
