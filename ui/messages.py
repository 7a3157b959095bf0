"""The dock's messages: every one shown in full, word-wrapped at the dock's width, with its level's colour and a
close button (QGIS's message bar draws one line and cuts long guidance). The methods are the message bar's
(`pushWarning`, `pushCritical`, `pushSuccess`, `pushInfo`, `items`), so the dock's parts push as before."""
from __future__ import annotations

import re

from qgis.PyQt.QtCore import Qt
from qgis.PyQt.QtWidgets import (
    QApplication,
    QFrame,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

INFO, SUCCESS, WARNING, CRITICAL = "info", "success", "warning", "critical"
COLOURS = {INFO: "#e3f2fd", SUCCESS: "#e8f5e9", WARNING: "#fff3e0", CRITICAL: "#ffebee"}
BREAK_AFTER = re.compile(r"([/\\_.,;:=&?-])(?=\S)")
ZERO_WIDTH_SPACE = "\u200b"


def breakable(text: str) -> str:
    """`text` with a zero-width break chance after path separators and punctuation inside long words, so a file
    path or a long layer name wraps instead of widening the dock (the full text is kept apart, unchanged)."""
    return BREAK_AFTER.sub(lambda m: m.group(1) + ZERO_WIDTH_SPACE, str(text))


class WrappedLabel(QLabel):
    """A word-wrapped label that asks for the height of all its lines at its present width (a wrapped QLabel in a
    layout may otherwise be given one line's height and cut the rest)."""

    def resizeEvent(self, event):  # noqa: N802 (Qt API name)
        super().resizeEvent(event)
        height = self.heightForWidth(self.width())
        if height > 0 and height != self.minimumHeight():
            self.setMinimumHeight(height)


class Message(QWidget):
    """One message: a word-wrapped, selectable label, Copy and close buttons; `text()` is the full text (without
    its title)."""

    def __init__(self, panel: MessagePanel, title: str, text: str, level: str):
        super().__init__(panel)
        self.panel = panel
        self.level = level
        self._text = str(text)
        shown = f"{title}: {text}" if title and title != "Lodestar" else self._text  # the dock says Lodestar
        layout = QHBoxLayout(self)
        layout.setContentsMargins(6, 4, 2, 4)
        self.label = WrappedLabel(breakable(shown), self)
        self.label.setTextFormat(Qt.PlainText)
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.label.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Minimum)
        self.label.setToolTip("Select the text to copy it, or use Copy")
        layout.addWidget(self.label, 1)
        self.copy_button = QToolButton(self)
        self.copy_button.setText("Copy")
        self.copy_button.setToolTip("Copy the whole message")
        self.copy_button.clicked.connect(lambda *_: QApplication.clipboard().setText(self._text))
        layout.addWidget(self.copy_button, 0, Qt.AlignTop)
        self.close_button = QToolButton(self)
        self.close_button.setText("\u00d7")
        self.close_button.setToolTip("Dismiss")
        self.close_button.clicked.connect(lambda *_: panel.popWidget(self))
        layout.addWidget(self.close_button, 0, Qt.AlignTop)
        self.setAttribute(Qt.WA_StyledBackground, True)
        self.setStyleSheet(f"Message {{ background: {COLOURS.get(level, COLOURS[INFO])}; border-radius: 3px; }}")

    def text(self) -> str:
        return self._text


class MessagePanel(QScrollArea):
    """A column of messages above the dock's tabs (newest last), each at its full wrapped height, scrolled when
    together they are taller than MAX_HEIGHT; hidden when empty."""

    MAX_HEIGHT = 220

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("messagePanel")
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.setSizePolicy(QSizePolicy.Preferred, QSizePolicy.Maximum)
        self.content = QWidget(self)
        self._layout = QVBoxLayout(self.content)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.setSpacing(2)
        self.setWidget(self.content)
        self._items: list = []
        self.setVisible(False)

    def sizeHint(self):  # noqa: N802 (Qt API name): as tall as the messages, up to MAX_HEIGHT
        hint = super().sizeHint()
        width = max(self.viewport().width(), 100)
        hint.setHeight(min(self.MAX_HEIGHT, self.content.heightForWidth(width) if self.content.hasHeightForWidth()
                           else self.content.sizeHint().height()) + 2)
        return hint

    def _relayout(self) -> None:
        self.setVisible(bool(self._items))
        self.updateGeometry()

    def push(self, title: str, text: str, level: str = INFO) -> Message:
        item = Message(self, title, text, level)
        self._items.append(item)
        self._layout.addWidget(item)
        self._relayout()
        return item

    def pushInfo(self, title: str, text: str) -> Message:  # noqa: N802 (QgsMessageBar's names)
        return self.push(title, text, INFO)

    def pushSuccess(self, title: str, text: str) -> Message:  # noqa: N802
        return self.push(title, text, SUCCESS)

    def pushWarning(self, title: str, text: str) -> Message:  # noqa: N802
        return self.push(title, text, WARNING)

    def pushCritical(self, title: str, text: str) -> Message:  # noqa: N802
        return self.push(title, text, CRITICAL)

    def popWidget(self, item: Message) -> bool:  # noqa: N802
        if item not in self._items:
            return False
        self._items.remove(item)
        self._layout.removeWidget(item)
        item.hide()
        item.deleteLater()
        self._relayout()
        return True

    def clearWidgets(self) -> None:  # noqa: N802
        for item in list(self._items):
            self.popWidget(item)

    def items(self) -> list:
        return list(self._items)
