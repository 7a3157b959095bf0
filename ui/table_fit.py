"""Dock tables that fit the dock: a name column that takes the width left and elides its text in the middle (two
layers named "ASTER AlOH ..." and "ASTER ferric ..." stay told apart; the full name is the cell's tooltip), the
other columns sized to their contents, and a horizontal scroll bar when even then they do not fit, so the last
column can always be reached."""
from __future__ import annotations

from qgis.PyQt.QtCore import Qt
from qgis.PyQt.QtWidgets import QHeaderView

NAME_MIN_PX = 90
"""The narrowest a name column gets before the table scrolls instead."""


def fit_to_width(view, name_column: int = 0) -> None:
    """Lay out a QTableWidget or QTreeWidget as the module says; `name_column` is the one that elides."""
    view.setTextElideMode(Qt.ElideMiddle)
    view.setHorizontalScrollBarPolicy(Qt.ScrollBarAsNeeded)
    header = view.horizontalHeader() if hasattr(view, "horizontalHeader") else view.header()
    header.setStretchLastSection(False)
    header.setMinimumSectionSize(min(header.minimumSectionSize(), NAME_MIN_PX))
    header.setSectionResizeMode(QHeaderView.ResizeToContents)
    header.setSectionResizeMode(name_column, QHeaderView.Stretch)


def name_tip(name: str, detail: str = "") -> str:
    """A name cell's tooltip: the whole name, then what else the cell says (a source, a reason)."""
    return f"{name}\n{detail}" if detail and detail != name else name
