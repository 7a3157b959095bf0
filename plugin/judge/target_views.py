"""The executor's zoomed look at a target: every evidence layer of the surface cropped to the target's view (its
bounds grown by half on every side), stretched locally (2-98 % of the crop), the target outlined, side by side in
one PNG with each layer's name. The verifier judges from the measurements of the same window
(`target_evidence`); the report shows the picture on the target's card."""
from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from ..files import PNG_OPTIONS
from ..render import text_font, to_rgb

PANEL_PX = 180
"""The longest side of each layer's crop in the picture."""
MAX_PANELS = 4
"""At most this many layers are drawn (the strongest inside the target first)."""
_OUTLINE = (0, 230, 255)
_TITLE_PX = 16


def draw_target_view(maps: dict, labels: np.ndarray, label: int, window: tuple, layers: list, path) -> Path:
    """The picture of target `label` (cells of `labels`) in `window` (row and column slices) for `layers` (names of
    `maps`, strongest first), written to `path`."""
    inside = labels[window] == label
    edge = inside & ~_eroded(inside)
    panels = []
    for name in layers[:MAX_PANELS]:
        crop = np.ma.masked_invalid(np.ma.asarray(maps[name], dtype=float)[window])
        if np.ma.count(crop) == 0:
            rgb = np.full(crop.shape + (3,), 200, dtype=np.uint8)  # no data in the view: grey
        else:
            rgb = to_rgb(crop, stretch=(2, 98), colormap="magma")
        rgb = rgb.copy()
        rgb[edge] = _OUTLINE
        image = Image.fromarray(rgb, mode="RGB")
        scale = PANEL_PX / max(image.size)
        image = image.resize((max(1, round(image.width * scale)), max(1, round(image.height * scale))),
                             Image.NEAREST)
        panels.append((name, image))
    width = sum(image.width for _, image in panels) + 6 * (len(panels) + 1)
    height = max(image.height for _, image in panels) + _TITLE_PX + 12
    sheet = Image.new("RGB", (width, height), (255, 255, 255))
    draw = ImageDraw.Draw(sheet)
    font = text_font(11)
    x = 6
    for name, image in panels:
        sheet.paste(image, (x, _TITLE_PX + 6))
        draw.text((x, 3), _elided(name, image.width), fill=(0, 0, 0), font=font)
        x += image.width + 6
    path = Path(path)
    sheet.save(path, format="PNG", **PNG_OPTIONS)
    return path


def _eroded(mask: np.ndarray) -> np.ndarray:
    from scipy import ndimage

    return ndimage.binary_erosion(mask, border_value=0)


def _elided(text: str, width_px: int) -> str:
    """`text` cut in the middle to fit about `width_px` pixels of the default font (6 px a character)."""
    room = max(6, width_px // 6)
    if len(text) <= room:
        return text
    half = (room - 1) // 2
    return text[:half] + "~" + text[-(room - 1 - half):]
