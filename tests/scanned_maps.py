"""Generated scanned geological maps, for the legend reader's tests and benchmark (tests/ is on sys.path).

A map of 6-15 units (warped Voronoi polygons in geological-map colours) inside a frame on white paper, thin contact
lines, black fault lines and unit labels drawn over it, and a legend box (title, one swatch and one unit name a row,
rendered with DejaVu Sans through PIL), then the scan: blur, noise, a JPEG encode and decode. Seeded: one seed, one
map. The truth keeps each pixel's unit (0 off the map: paper, the legend box, drawn ink and its 1-pixel fringe).
"""
from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont
from scipy import ndimage

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
FONT_BOLD = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"
CRS = "EPSG:32750"
ORIGIN = (400_000.0, 7_000_000.0)
PIXEL_M = 25.0

UNITS = (  # name, map colour: the colours geological surveys use for such rocks
    ("Archaean granite", (239, 140, 150)),
    ("Mafic volcanics", (84, 168, 96)),
    ("Banded iron formation", (120, 70, 150)),
    ("Felsic volcanics", (250, 196, 120)),
    ("Ultramafic rocks", (40, 110, 90)),
    ("Quaternary alluvium", (252, 246, 176)),
    ("Sandstone and siltstone", (214, 186, 140)),
    ("Granodiorite", (226, 80, 90)),
    ("Dolerite dykes", (60, 120, 170)),
    ("Limestone", (130, 190, 230)),
    ("Shale", (170, 170, 170)),
    ("Metabasalt", (150, 200, 110)),
    ("Conglomerate", (240, 220, 60)),
    ("Gneiss and migmatite", (200, 110, 190)),
    ("Quartzite", (250, 170, 200)),
    ("Laterite", (180, 90, 40)),
    ("Chert", (110, 110, 60)),
    ("Tonalite", (255, 110, 60)),
)
LEGEND_MARGIN = 300
"""Paper (pixels) right of the map for a legend in the margin."""
CODES = ("Ag", "Mv", "Bif", "Fv", "Um", "Qa", "Ss", "Gd", "Dd", "Ls", "Sh", "Mb", "Cg", "Gn", "Qz", "Lt", "Ch", "Tn")


@dataclass
class ScannedMap:
    """One generated scan: the image (bands, rows, cols) uint8 RGB, the true unit of each pixel (1..n, 0 off the
    map), the units' names and colours in legend order (code k is entry k - 1), the legend box (col0, row0, col1,
    row1) and the drawn ink (lines, labels)."""

    rgb: np.ndarray
    truth: np.ndarray
    names: list
    colours: list
    legend_box: tuple
    ink: np.ndarray

    @property
    def transform(self):
        from rasterio.transform import from_origin

        return from_origin(ORIGIN[0], ORIGIN[1], PIXEL_M, PIXEL_M)

    def write(self, path, georeferenced: bool = True) -> Path:
        """The image as an RGB GeoTIFF (CRS and transform), or a plain PNG / JPEG-free TIFF when not georeferenced."""
        import warnings

        import rasterio
        from rasterio.errors import NotGeoreferencedWarning

        path = Path(path)
        profile = {"driver": "GTiff" if path.suffix.lower() in (".tif", ".tiff") else "PNG", "width":
                   self.rgb.shape[2], "height": self.rgb.shape[1], "count": 3, "dtype": "uint8"}
        if georeferenced:
            profile.update(crs=CRS, transform=self.transform)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NotGeoreferencedWarning)
            with rasterio.open(path, "w", **profile) as dst:
                dst.write(self.rgb)
        return path


def make_scanned_map(seed: int, width: int = 960, height: int = 720, units: int | None = None,
                     jpeg_quality: int | None = None, noise: float | None = None, columns: int = 1,
                     in_margin: bool = False) -> ScannedMap:
    """A seeded scanned map (see the module docstring): the legend in `columns` columns, in a framed box over a
    corner of the map, or (`in_margin`) unframed on the paper right of the map (LEGEND_MARGIN wide: one column)."""
    rng = np.random.default_rng(seed)
    count = int(units or rng.integers(6, 16))
    picks = rng.choice(len(UNITS), size=count, replace=False)
    names = [UNITS[i][0] for i in picks]
    colours = [UNITS[i][1] for i in picks]
    codes = [CODES[i] for i in picks]
    margin = 24
    frame = (margin, margin, width - margin - (LEGEND_MARGIN if in_margin else 0), height - margin)
    labels = _unit_polygons(rng, count, frame, width, height)

    page = np.full((height, width, 3), 255, dtype=np.uint8)
    inside = labels > 0
    page[inside] = np.asarray(colours, dtype=np.uint8)[labels[inside] - 1]
    image = Image.fromarray(page)
    ink = Image.new("L", (width, height), 0)
    draws = (ImageDraw.Draw(image), ImageDraw.Draw(ink))
    _contacts(draws, labels)
    _faults(draws, rng, frame)
    _unit_labels(draws, rng, labels, codes, colours)
    for draw, value in zip(draws, ((0, 0, 0), 255)):
        draw.rectangle(frame, outline=value, width=2)
    legend_box = _legend(draws, rng, names, colours, frame, columns, in_margin)

    scan = image.filter(ImageFilter.GaussianBlur(0.6))
    noisy = np.asarray(scan, dtype=np.float32) + rng.normal(0.0, noise if noise is not None else rng.uniform(3, 6),
                                                            size=(height, width, 3))
    buffer = io.BytesIO()
    Image.fromarray(np.clip(np.rint(noisy), 0, 255).astype(np.uint8)).save(
        buffer, format="JPEG", quality=int(jpeg_quality or rng.integers(70, 88)))
    rgb = np.asarray(Image.open(io.BytesIO(buffer.getvalue())).convert("RGB")).transpose(2, 0, 1).copy()

    drawn = np.asarray(ink) > 0
    truth = labels.copy()
    truth[ndimage.binary_dilation(drawn, iterations=1)] = 0
    c0, r0, c1, r1 = legend_box
    truth[r0:r1 + 1, c0:c1 + 1] = 0
    return ScannedMap(rgb, truth, names, colours, legend_box, drawn)


def _unit_polygons(rng, count: int, frame, width: int, height: int) -> np.ndarray:
    """Unit codes 1..count inside the frame (0 outside): nearest of 2-3 sites a unit, on smoothly warped
    coordinates, so contacts curve like mapped ones; every unit keeps some area."""
    x0, y0, x1, y1 = frame
    sites_per_unit = 3
    sites = rng.uniform((x0, y0), (x1, y1), size=(count * sites_per_unit, 2))
    owner = np.repeat(np.arange(1, count + 1), sites_per_unit)
    rows, cols = np.mgrid[0:height, 0:width].astype(np.float32)
    warp = []
    for _ in range(2):
        coarse = ndimage.gaussian_filter(rng.normal(size=(height // 16 + 2, width // 16 + 2)), 1.5)
        field = ndimage.zoom(coarse, 16, order=1)[:height, :width]
        warp.append(field / (np.abs(field).max() + 1e-9) * 40.0)
    wc, wr = cols + warp[0], rows + warp[1]
    best = np.full((height, width), np.inf, dtype=np.float32)
    labels = np.zeros((height, width), dtype=np.int32)
    for (sx, sy), unit in zip(sites, owner):
        distance = (wc - sx) ** 2 + (wr - sy) ** 2
        closer = distance < best
        best[closer] = distance[closer]
        labels[closer] = unit
    outside = np.ones((height, width), dtype=bool)
    outside[y0:y1, x0:x1] = False
    labels[outside] = 0
    return labels


def _contacts(draws, labels: np.ndarray) -> None:
    """Thin dark-grey contact lines where two units meet."""
    edge = np.zeros(labels.shape, dtype=bool)
    edge[:, 1:] |= (labels[:, 1:] != labels[:, :-1]) & (labels[:, 1:] > 0) & (labels[:, :-1] > 0)
    edge[1:, :] |= (labels[1:, :] != labels[:-1, :]) & (labels[1:, :] > 0) & (labels[:-1, :] > 0)
    rows, cols = np.nonzero(edge)
    for draw, value in zip(draws, ((45, 45, 45), 255)):
        draw.point(list(zip(cols.tolist(), rows.tolist())), fill=value)


def _faults(draws, rng, frame) -> None:
    """3-6 black fault traces (gently curving polylines, 2-3 px wide) across the map."""
    x0, y0, x1, y1 = frame
    for _ in range(int(rng.integers(3, 7))):
        start = rng.uniform((x0, y0), (x1, y1))
        angle = rng.uniform(0, np.pi)
        points = [tuple(start)]
        for _ in range(int(rng.integers(8, 16))):
            angle += rng.normal(0, 0.15)
            step = rng.uniform(15, 35)
            x = float(np.clip(points[-1][0] + step * np.cos(angle), x0 + 2, x1 - 2))
            y = float(np.clip(points[-1][1] + step * np.sin(angle), y0 + 2, y1 - 2))
            points.append((x, y))
        line_width = int(rng.integers(2, 4))
        for draw, value in zip(draws, ((0, 0, 0), 255)):
            draw.line(points, fill=value, width=line_width, joint="curve")


def _unit_labels(draws, rng, labels: np.ndarray, codes: list, colours: list) -> None:
    """Unit code labels in black (5-10 of them) at points inside their units."""
    font = ImageFont.truetype(FONT, int(rng.integers(12, 16)))
    rows, cols = np.nonzero(labels > 0)
    for _ in range(int(rng.integers(5, 11))):
        k = int(rng.integers(rows.size))
        unit = labels[rows[k], cols[k]]
        for draw, value in zip(draws, ((0, 0, 0), 255)):
            draw.text((int(cols[k]), int(rows[k])), codes[unit - 1], font=font, fill=value)


def _legend(draws, rng, names: list, colours: list, frame, columns: int, in_margin: bool) -> tuple:
    """The legend: a title and one row a unit (a swatch with a thin outline, its name to the right), in columns; in a
    white box with a black frame over a corner of the map, or unframed on the paper right of the map. Returns its
    box (col0, row0, col1, row1)."""
    size = int(rng.integers(14, 18))
    font = ImageFont.truetype(FONT, size)
    title_font = ImageFont.truetype(FONT_BOLD, size + 2)
    swatch_w, swatch_h = int(rng.integers(30, 44)), int(rng.integers(16, 22))
    row_h = swatch_h + int(rng.integers(8, 14))
    pad, gap, column_gap = 12, 10, 24
    text_w = max(draws[0].textlength(name, font=font) for name in names)
    per_column = -(-len(names) // columns)
    column_w = int(swatch_w + gap + text_w + column_gap)
    box_w = int(pad * 2 + column_w * columns - column_gap)
    box_h = int(pad * 2 + size + 14 + row_h * per_column)
    x0, y0, x1, y1 = frame
    corner = int(rng.integers(4))
    left = x1 - 16 - box_w if corner in (0, 1) else x0 + 16
    top = y1 - 16 - box_h if corner in (0, 2) else y0 + 16
    if in_margin:
        left, top = x1 + 16, y0
    box = (left, top, left + box_w, top + box_h)
    width, height = draws[0].im.size
    if box[2] >= width or box[3] >= height:
        raise ValueError(f"The legend ({box_w} x {box_h} pixels) does not fit the image; make it larger.")
    if not in_margin:
        for draw in draws:
            draw.rectangle(box, fill=(255, 255, 255) if draw is draws[0] else 0)
        draws[0].rectangle(box, outline=(0, 0, 0), width=2)
    draws[0].text((left + pad, top + pad), "LEGEND", font=title_font, fill=(0, 0, 0))
    for i, (name, colour) in enumerate(zip(names, colours)):
        x = left + pad + (i // per_column) * column_w
        y = top + pad + size + 14 + (i % per_column) * row_h
        draws[0].rectangle((x, y, x + swatch_w, y + swatch_h), fill=tuple(colour), outline=(0, 0, 0))
        draws[0].text((x + swatch_w + gap, y + swatch_h / 2 - size * 0.6), name, font=font, fill=(0, 0, 0))
    return box
