"""Scanned geological maps read through their legends (plugin/tools/map_legend.py and its parts), on generated scans
(tests/scanned_maps.py: a real font, noise, JPEG artefacts, lines and labels over the map)."""
from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
import rasterio
from scanned_maps import CRS, LEGEND_MARGIN, make_scanned_map

from lodestar.plugin.errors import LodestarError
from lodestar.plugin.tools.categorical import read_legend
from lodestar.plugin.tools.legend_classify import classify_block, delta_e, rgb_to_lab
from lodestar.plugin.tools.legend_swatches import find_legend
from lodestar.plugin.tools.legend_words import correct_name
from lodestar.plugin.tools.map_legend import (
    LegendOutputs,
    classify_map,
    read_corrections,
    read_map_legend,
    read_sidecar,
)

needs_tesseract = pytest.mark.skipif(shutil.which("tesseract") is None,
                                     reason="Tesseract OCR is not installed (Debian: apt-get install tesseract-ocr)")
SEED = 7  # 15 units, the legend on the right of the map


def unit_accuracy(codes: np.ndarray, scan, names: dict) -> float:
    """Share of the map's unit pixels (truth > 0) given the right unit, matched by name; nodata counts as wrong."""
    lut = np.zeros(256, dtype=int)
    for value, name in names.items():
        if name in scan.names:
            lut[value] = scan.names.index(name) + 1
    inside = scan.truth > 0
    return float((lut[codes][inside] == scan.truth[inside]).mean())


@pytest.fixture(scope="module")
def scan():
    return make_scanned_map(SEED)


@pytest.fixture(scope="module")
def read(scan, tmp_path_factory):
    """The generated scan as a GeoTIFF, read once: (scan, image path, outputs, reading)."""
    if shutil.which("tesseract") is None:
        pytest.skip("Tesseract OCR is not installed (Debian: apt-get install tesseract-ocr)")
    folder = tmp_path_factory.mktemp("legend")
    image = scan.write(folder / "scan.tif")
    before = image.read_bytes()
    outputs = LegendOutputs.beside(folder / "units.tif")
    reading = read_map_legend(image, outputs)
    assert image.read_bytes() == before  # the input is never modified
    return scan, image, outputs, reading


def test_swatches_and_legend_box_are_found(scan):
    layout = find_legend(scan.rgb)
    assert layout is not None and len(layout.swatches) == len(scan.names) == 15
    assert np.allclose(layout.box, scan.legend_box, atol=2)
    rows = [s[1] for s in layout.swatches]
    assert rows == sorted(rows)  # legend order: top to bottom
    for swatch, colour in zip(layout.swatches, scan.colours):
        c0, r0, c1, r1 = swatch
        patch = scan.rgb[:, r0 + 2:r1 - 1, c0 + 2:c1 - 1].reshape(3, -1)
        assert float(delta_e(rgb_to_lab(np.median(patch, axis=1)), rgb_to_lab(colour))) < 5
    for strip, swatch in zip(layout.label_boxes, layout.swatches):
        assert strip[0] > swatch[2] and strip[1] <= swatch[1] and strip[3] >= swatch[3] and strip[2] <= layout.box[2]


def test_a_map_without_legend_has_none():
    rng = np.random.default_rng(1)
    plain = make_scanned_map(3).rgb.copy()
    plain[:, 200:, :] = rng.integers(0, 255, size=(3, plain.shape[1] - 200, plain.shape[2]), dtype=np.uint8)
    assert find_legend(plain[:, 200:, :]) is None


def test_vocabulary_fixes_classic_ocr_confusions_only():
    assert correct_name("Quatemary alluvium") == ("Quaternary alluvium", [("Quatemary", "Quaternary")])
    assert correct_name("Ulitramafic rocks") == ("Ultramafic rocks", [("Ulitramafic", "Ultramafic")])
    assert correct_name("Mount Magnet Formation") == ("Mount Magnet Formation", [])  # unknown words stay
    assert correct_name("Shale") == ("Shale", [])


def test_ink_is_masked_and_units_kept():
    """A pale unit crossed by a 2-pixel black line and a dark unit beside it: the line is nodata, the contact
    between the two units is no ink."""
    rgb = np.zeros((3, 40, 60), dtype=np.uint8)
    rgb[:, :, :30] = np.array([252, 246, 176])[:, None, None]
    rgb[:, :, 30:] = np.array([40, 110, 90])[:, None, None]
    rgb[:, 19:21, :] = 0
    units = rgb_to_lab(np.array([[252, 246, 176], [40, 110, 90]], dtype=np.float32))
    codes, counts = classify_block(rgb, units, None, 20.0, np.zeros((40, 60), dtype=bool))
    assert (codes[18:22] == 0).all()                       # the line and its fringe
    assert (codes[:16, :29] == 1).all() and (codes[24:, :29] == 1).all()
    assert (codes[:16, 31:] == 2).all() and (codes[24:, 31:] == 2).all()
    assert (codes[:16, 29:31] > 0).all()                   # the unit contact is kept
    assert counts.ink == int((codes == 0).sum()) and counts.units == {1: int((codes == 1).sum()),
                                                                      2: int((codes == 2).sum())}


@needs_tesseract
def test_names_colours_and_units_of_a_scanned_map(read):
    scan, image, outputs, reading = read
    assert [u.name for u in reading.units] == scan.names
    assert all(u.ocr_text and u.ocr_confidence > 50 for u in reading.units)
    for unit, colour in zip(reading.units, scan.colours):
        assert float(delta_e(rgb_to_lab(unit.rgb), rgb_to_lab(colour))) < 5
    with rasterio.open(outputs.raster) as ds, rasterio.open(image) as source:
        codes = ds.read(1)
        assert (ds.crs.to_string(), ds.transform, ds.nodata, ds.dtypes[0]) == (CRS, source.transform, 0, "uint8")
        assert ds.tags()["LODESTAR_ROLE"] == "geological_map"
        assert ds.colormap(1)[3][:3] == reading.units[2].rgb  # coloured as the map
    assert unit_accuracy(codes, scan, reading.names()) > 0.97
    c0, r0, c1, r1 = scan.legend_box
    assert (codes[r0:r1 + 1, c0:c1 + 1] == 0).all()        # the legend box is nodata
    assert (codes[scan.ink] == 0).mean() > 0.9             # so are the lines and labels drawn over the map
    shares = [u.share for u in reading.units]
    assert sum(shares) == pytest.approx(1.0, abs=1e-4) and min(shares) > 0
    assert sum(u.pixels for u in reading.units) == reading.counts["classified"] == int((codes > 0).sum())


@needs_tesseract
def test_sidecar_and_legend_read_back(read):
    scan, image, outputs, reading = read
    assert read_legend(outputs.legend) == {i + 1: name for i, name in enumerate(scan.names)}
    header = outputs.legend.read_text(encoding="utf-8").splitlines()[0]
    assert header == "value,name,r,g,b"
    back = read_sidecar(outputs.sidecar)
    assert back == reading
    data = json.loads(outputs.sidecar.read_text(encoding="utf-8"))
    assert data["format"] == "lodestar-map-legend/1" and data["box"] == list(reading.box)
    assert data["units"][0]["ocr_text"] and data["corrections"] == [] and data["ocr"].startswith("tesseract 5")
    assert data["box_bounds"][0] == pytest.approx(400_000.0 + reading.box[0] * 25.0)


@needs_tesseract
def test_corrections_rename_recolour_and_reclassify(read, tmp_path):
    scan, image, outputs, reading = read
    # a wrong colour for unit 4 (as a misread swatch would give): its pixels are lost to nodata or other units
    bad = classify_map(reading, LegendOutputs.beside(tmp_path / "bad.tif"), {4: {"rgb": (0, 0, 255)}})
    with rasterio.open(tmp_path / "bad.tif") as ds:
        bad_codes = ds.read(1)
    true_four = scan.truth == 4
    assert (bad_codes[true_four] == 4).mean() < 0.5
    # the geologist's corrections: the legend CSV edited (a name and unit 4's colour back to the map's)
    edited = tmp_path / "corrections.csv"
    rows = outputs.legend.read_text(encoding="utf-8").splitlines()
    rows[1] = "1,Porphyritic granite," + ",".join(rows[1].split(",")[2:])
    rows[4] = f"4,{scan.names[3]}," + ",".join(str(c) for c in scan.colours[3])
    edited.write_text("\n".join(rows) + "\n", encoding="utf-8")
    assert read_corrections(edited)[1]["name"] == "Porphyritic granite"
    fixed_out = LegendOutputs.beside(tmp_path / "fixed.tif")
    classify_map(bad, fixed_out, edited)
    with rasterio.open(fixed_out.raster) as ds:
        fixed_codes = ds.read(1)
    assert (fixed_codes[true_four] == 4).mean() > 0.95
    assert read_legend(fixed_out.legend)[1] == "Porphyritic granite"
    changes = read_sidecar(fixed_out.sidecar).corrections
    assert {(c["value"], c["field"]) for c in changes} == {(1, "name")} | (
        {(4, "colour")} if tuple(scan.colours[3]) != reading.units[3].read_rgb else set())
    assert changes[0] == {"value": 1, "field": "name", "read": scan.names[0], "corrected": "Porphyritic granite"}
    # corrections apply to what was read: the bad run's colour is not what the fixed run starts from
    assert read_sidecar(fixed_out.sidecar).units[3].read_rgb == reading.units[3].read_rgb


@needs_tesseract
def test_a_unit_added_by_correction_and_bad_corrections(read, tmp_path):
    scan, image, outputs, reading = read
    added = classify_map(reading, LegendOutputs.beside(tmp_path / "added.tif"),
                         {99: {"name": "Water", "rgb": (0, 0, 255)}})
    assert added.units[-1].value == 99 and added.corrections[-1]["field"] == "added"
    with pytest.raises(LodestarError, match="no such unit.*needs both a name and a colour"):
        classify_map(reading, LegendOutputs.beside(tmp_path / "x.tif"), {42: "Lake"})
    bad_csv = tmp_path / "bad.csv"
    bad_csv.write_text("name\nGranite\n", encoding="utf-8")
    with pytest.raises(LodestarError, match="'value' column"):
        classify_map(reading, LegendOutputs.beside(tmp_path / "y.tif"), bad_csv)
    assert not (tmp_path / "x.tif").exists() and not (tmp_path / "y.tif").exists()


@needs_tesseract
@pytest.mark.parametrize("seed,layout", [(12, {"columns": 2, "units": 14}), (13, {"in_margin": True})])
def test_legends_in_two_columns_and_on_open_paper(tmp_path, seed, layout):
    scan = make_scanned_map(seed, **layout)
    outputs = LegendOutputs.beside(tmp_path / "units.tif")
    reading = read_map_legend(scan.write(tmp_path / "scan.tif"), outputs)
    assert [u.name for u in reading.units] == scan.names
    framed = "framed background" in reading.box_found
    assert framed != bool(layout.get("in_margin"))
    if framed:
        assert reading.box == scan.legend_box
    with rasterio.open(outputs.raster) as ds:
        codes = ds.read(1)
    assert unit_accuracy(codes, scan, reading.names()) > 0.97
    if not framed:  # the paper of the margin, the legend on it, is no unit
        assert reading.counts["paper"] > 0.5 * scan.rgb.shape[1] * LEGEND_MARGIN


@needs_tesseract
@pytest.mark.filterwarnings("ignore::rasterio.errors.NotGeoreferencedWarning")
def test_an_image_without_georeferencing_and_a_given_legend_box(tmp_path):
    scan = make_scanned_map(4, units=6)
    image = scan.write(tmp_path / "scan.png", georeferenced=False)
    c0, r0, c1, r1 = scan.legend_box
    outputs = LegendOutputs.beside(tmp_path / "units.tif")
    reading = read_map_legend(image, outputs, legend_box=(c0 - 3, -(r1 + 3), c1 + 3, -(r0 - 3)))  # as QGIS shows it
    assert reading.box == (c0 - 3, r0 - 3, c1 + 2, r1 + 2) and reading.box_found == "given"
    assert [u.name for u in reading.units] == scan.names
    with rasterio.open(outputs.raster) as ds:
        assert ds.crs is None and (ds.width, ds.height) == (scan.rgb.shape[2], scan.rgb.shape[1])
        assert unit_accuracy(ds.read(1), scan, reading.names()) > 0.97


def test_bad_inputs_say_what_to_do(tmp_path, monkeypatch):
    from rasterio.transform import from_origin

    single = tmp_path / "codes.tif"
    with rasterio.open(single, "w", driver="GTiff", width=20, height=20, count=1, dtype="uint8", crs=CRS,
                       transform=from_origin(0, 20, 1, 1)) as ds:
        ds.write(np.ones((1, 20, 20), dtype="uint8"))
    with pytest.raises(LodestarError, match="1 band.*3 or 4 8-bit bands.*legend CSV"):
        read_map_legend(single, LegendOutputs.beside(tmp_path / "a.tif"))
    if shutil.which("tesseract") is not None:
        noise = np.random.default_rng(0).integers(0, 255, size=(3, 200, 300), dtype=np.uint8)
        image = tmp_path / "noise.tif"
        with rasterio.open(image, "w", driver="GTiff", width=300, height=200, count=3, dtype="uint8", crs=CRS,
                           transform=from_origin(0, 200, 1, 1)) as ds:
            ds.write(noise)
        with pytest.raises(LodestarError, match="No legend found anywhere.*Draw the legend box"):
            read_map_legend(image, LegendOutputs.beside(tmp_path / "b.tif"))
        with pytest.raises(LodestarError, match="positive Delta E"):
            read_map_legend(image, LegendOutputs.beside(tmp_path / "b.tif"), tolerance=0)
    assert not any(p.name.startswith(("a", "b")) for p in tmp_path.iterdir() if p.suffix in (".tif", ".csv", ".json"))
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("LODESTAR_TESSERACT", raising=False)
    scan_image = make_scanned_map(2, units=6).write(tmp_path / "scan.tif")
    with pytest.raises(LodestarError, match="apt-get install tesseract-ocr.*brew install tesseract.*UB Mannheim"):
        read_map_legend(scan_image, LegendOutputs.beside(tmp_path / "c.tif"))


@needs_tesseract
def test_a_large_scan_is_searched_decimated_and_read_at_full_resolution(tmp_path, monkeypatch):
    """A scan twice the size (a finer scanning resolution): the legend is looked for on the image read at half size,
    names and colours are read, and pixels classified, at full size."""
    from scipy import ndimage

    from lodestar.plugin.tools import map_legend

    monkeypatch.setattr(map_legend, "DETECT_MAX_PIXELS", 700_000)
    scan = make_scanned_map(4, units=8)
    scan.rgb = ndimage.zoom(scan.rgb, (1, 2, 2), order=1)
    outputs = LegendOutputs.beside(tmp_path / "units.tif")
    reading = read_map_legend(scan.write(tmp_path / "scan.tif"), outputs)
    assert "decimated 2 times" in reading.box_found
    assert [u.name for u in reading.units] == scan.names
    assert np.allclose(reading.box, [2 * v for v in scan.legend_box], atol=4)
    with rasterio.open(outputs.raster) as ds:
        codes = ds.read(1)
    truth = np.repeat(np.repeat(scan.truth, 2, axis=0), 2, axis=1)
    assert (codes[truth > 0] == truth[truth > 0]).mean() > 0.97
