"""Case folders: read_case / write_case round trip and clear errors for malformed case.json files."""
from __future__ import annotations

import json

import numpy as np
import pytest
import rasterio
from rasterio.transform import from_origin

from lodestar.plugin.errors import LodestarError
from lodestar.plugin.raster_io import LayerSpec
from lodestar.plugin.request.case import Case, read_case, write_case


def _tif(path):
    with rasterio.open(path, "w", driver="GTiff", width=4, height=4, count=1, dtype="float32", crs="EPSG:32611",
                       transform=from_origin(500_000, 4_000_000, 30, 30)) as ds:
        ds.write(np.ones((1, 4, 4), dtype="float32"))
    return path


def test_write_case_round_trip(tmp_path):
    layers = tmp_path / "layers"
    layers.mkdir()
    aloh = _tif(layers / "aloh.tif")
    legend = layers / "legend.csv"
    legend.write_text("value,name\n1,Limestone\n")
    case = Case("c1", "Porphyry Cu here?", [LayerSpec(aloh, "hydrothermal_alteration", name="AlOH",
                                                        favourable="low", legend=legend)],
                choices={"A": "Yes", "B": "No"}, answer="B")
    target = write_case(case, tmp_path)
    data = json.loads(target.read_text(encoding="utf-8"))
    assert data["layers"] == [{"path": "layers/aloh.tif", "role": "hydrothermal_alteration", "name": "AlOH",
                               "favourable": "low", "legend": "layers/legend.csv"}]
    back = read_case(tmp_path)
    assert (back.id, back.question, back.answer, back.choices) == ("c1", "Porphyry Cu here?", "B", case.choices)
    spec = back.layers[0]
    assert (spec.path, spec.role, spec.name, spec.favourable, spec.legend) == (aloh, "hydrothermal_alteration",
                                                                               "AlOH", "low", legend)
    outside = Case("c2", "q", [LayerSpec(_tif(tmp_path.parent / f"{tmp_path.name}_outside.tif"), "other")])
    with pytest.raises(LodestarError, match="not inside the case folder"):
        write_case(outside, tmp_path / "other")


@pytest.mark.parametrize("content, message", [
    ("[1, 2]", "one JSON object"),
    ('{"format": "lodestar-case/1", "id": "x", "question": "q", "layers": {"path": "a.tif"}}', "must be a list"),
    ('{"format": "lodestar-case/1", "id": "x", "question": "q", "layers": [{"path": "a.tif", "role": "other"}],'
     ' "choices": ["Yes", "No"]}', "'choices' must be an object"),
])
def test_malformed_case_json_is_a_clear_error(tmp_path, content, message):
    _tif(tmp_path / "a.tif")
    (tmp_path / "case.json").write_text(content, encoding="utf-8")
    with pytest.raises(LodestarError, match=message):
        read_case(tmp_path)


def test_favourable_units_named_on_a_layer_round_trip_and_bad_ones_are_refused(tmp_path):
    geology = _tif(tmp_path / "geology.tif")
    case = Case("c3", "Where is gold likely?", [LayerSpec(geology, "geological_map", name="geology")],
                favourable_units={"geology": ["LPZE", "limestone"]})
    data = json.loads(write_case(case, tmp_path).read_text(encoding="utf-8"))
    assert data["layers"][0]["favourable_units"] == ["LPZE", "limestone"]
    assert read_case(tmp_path).favourable_units == {"geology": ["LPZE", "limestone"]}
    data["layers"][0]["favourable_units"] = "LPZE"
    (tmp_path / "case.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(LodestarError, match="'favourable_units' must be a list of unit codes or names"):
        read_case(tmp_path)


@pytest.mark.parametrize("field, value, message", [
    ("path", "../outside.tif", "layer 1's 'path' '../outside.tif' lies outside the case folder"),
    ("path", "/etc/passwd", "layer 1's 'path' '/etc/passwd' lies outside the case folder"),
    ("path", 7, "layer 1's 'path' must be a file name relative to the case folder, not 7"),
    ("legend", "../../secret.csv", "layer 1's 'legend' '../../secret.csv' lies outside the case folder"),
    ("role", 3, "layer 1's 'role' must be text, not 3"),
    ("deposits", "../deposits.geojson", "'deposits' '../deposits.geojson' lies outside the case folder"),
])
def test_a_case_may_only_name_files_inside_its_folder(tmp_path, field, value, message):
    """A shared case must not make Lodestar read (or send to a model) files elsewhere on the machine."""
    folder = tmp_path / "case"
    folder.mkdir()
    _tif(folder / "a.tif")
    _tif(tmp_path / "outside.tif")
    (tmp_path / "secret.csv").write_text("value,name\n1,secret\n")
    layer = {"path": "a.tif", "role": "geological_map"}
    data = {"format": "lodestar-case/1", "id": "x", "question": "q", "layers": [layer]}
    (data if field == "deposits" else layer)[field] = value
    (folder / "case.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(LodestarError) as caught:
        read_case(folder)
    assert message in str(caught.value)
