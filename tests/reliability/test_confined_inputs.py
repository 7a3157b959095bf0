"""Inputs confined to the case and checked up front (issue 46, items 2, 5, 6, 7 and 12's duplicated keys): a VRT
reading a file outside the case, a network path (in a VRT or not), a replayed record edited to read another file,
a GeoPackage of several layers, a folder given as a layer, an empty vector, a case.json with a repeated key. Each
is refused in one line, before GDAL opens the file and before any model call, and nothing is written. Issue 60: every
file GDAL lists for a raster (a VRT behind a comment or a note, a VRT inside it, an ERS header's data file, a .aux.xml)
is checked, checksummed and checked again by a replay; no request leaves; a raster given by its file is only read."""
from __future__ import annotations

import json
import shutil
import threading
from html import escape
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import geopandas as gpd
import pytest
import rasterio
from osgeo import gdal
from shapely.geometry import box

from lodestar.models import run_analysis
from lodestar.plugin.analysis import AnalysisRequest, BackendSettings
from lodestar.plugin.confinement import guarded_gdal
from lodestar.plugin.errors import LodestarError
from lodestar.plugin.progress import Progress
from lodestar.plugin.raster_io import LayerSpec, RasterSet
from lodestar.plugin.request.case import read_case
from lodestar.plugin.request.record import sha256_file
from lodestar.tests.fakes.openai_server import FakeOpenAIServer, Reply
from lodestar.tests.fakes.sta_cot_scripts import copy_sample

SECRET = "TOPSECRET-0xC0FFEE"
QUESTION = "Can porphyry copper deposits be detected here? Answer: A. Yes B. No."


# ------------------------------------------------------------------------------------------------ helpers
@pytest.fixture
def pam_read(monkeypatch):
    """GDAL reads a dataset's .aux.xml, as in QGIS. The suite turns that off by the environment (conftest), and a
    `rasterio.Env` leaves the environment's value behind in GDAL's own configuration when it exits (evidence_view's
    does), so both are set here and GDAL's is put back after."""
    monkeypatch.delenv("GDAL_PAM_ENABLED", raising=False)
    before = gdal.GetConfigOption("GDAL_PAM_ENABLED")
    gdal.SetConfigOption("GDAL_PAM_ENABLED", "YES")
    yield
    gdal.SetConfigOption("GDAL_PAM_ENABLED", before)


def _case(folder: Path) -> Path:
    """A private copy of the sample case in `folder`."""
    return copy_sample(folder)


def _edit_case(case: Path, change) -> None:
    data = json.loads((case / "case.json").read_text(encoding="utf-8"))
    change(data)
    (case / "case.json").write_text(json.dumps(data, indent=1), encoding="utf-8")


def _set_path(case: Path, old: str, new: str) -> None:
    def change(data):
        entry = next(e for e in data["layers"] if e["path"] == old)
        entry["path"] = new
    _edit_case(case, change)


def _request(case: Path, out: Path, settings: BackendSettings | None = None) -> AnalysisRequest:
    read = read_case(case)
    return AnalysisRequest(read.layers, read.question, out, choices=read.choices, case_id=read.id,
                           deposits=read.deposits, settings=settings or BackendSettings())


def _vrt(path: Path, like: Path, source: str, relative: bool = True) -> Path:
    """A one-band VRT with `like`'s grid reading `source` (as written: relative to the VRT or not)."""
    with rasterio.open(like) as ds:
        t, crs, width, height = ds.transform, ds.crs.to_wkt(), ds.width, ds.height
    path.write_text(
        f'<VRTDataset rasterXSize="{width}" rasterYSize="{height}">\n'
        f"  <SRS>{crs.replace('&', '&amp;').replace('<', '&lt;')}</SRS>\n"
        f"  <GeoTransform>{t.c}, {t.a}, {t.b}, {t.f}, {t.d}, {t.e}</GeoTransform>\n"
        '  <VRTRasterBand dataType="Float32" band="1">\n    <SimpleSource>\n'
        f'      <SourceFilename relativeToVRT="{int(relative)}">{source}</SourceFilename>\n'
        "      <SourceBand>1</SourceBand>\n    </SimpleSource>\n  </VRTRasterBand>\n</VRTDataset>\n",
        encoding="utf-8")
    return path


def _spy_opens(monkeypatch) -> list:
    """Every path rasterio opens from now on."""
    opened, real = [], rasterio.open

    def spy(path, *args, **kwargs):
        opened.append(str(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(rasterio, "open", spy)
    return opened


class _Recorder(BaseHTTPRequestHandler):
    """A loopback HTTP server's handler that records every request and answers 404."""

    def _answer(self):
        self.server.seen.append(f"{self.command} {self.path}")
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_HEAD = do_POST = _answer  # noqa: N815 (http.server names)

    def log_message(self, *args):
        pass


@pytest.fixture
def loopback():
    """A real HTTP server on 127.0.0.1 that records requests (`.seen`) and serves nothing."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    server.seen = []
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def _one_line(message: str) -> str:
    assert "\n" not in message and "Traceback" not in message
    return message


# ---------------------------------------------------------------- item 2: a VRT reading outside the case folder
def test_a_vrt_reading_a_raster_outside_the_case_is_refused_before_gdal_opens_it(tmp_path, monkeypatch):
    case = _case(tmp_path / "shared")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.copy(case / "silica.tif", elsewhere / "secret.tif")
    _vrt(case / "silica.vrt", case / "silica.tif", "../../elsewhere/secret.tif")
    _set_path(case, "silica.tif", "silica.vrt")
    opened = _spy_opens(monkeypatch)
    with pytest.raises(LodestarError) as caught:
        run_analysis(_request(case, tmp_path / "run"))
    assert _one_line(str(caught.value)) == (
        f"silica.vrt reads '../../elsewhere/secret.tif', which lies outside {case.resolve()}; a dataset may read "
        "only files inside the case folder (or its own folder): copy the file there and point the VRT at it, or "
        "save the VRT as a GeoTIFF (Raster > Conversion > Translate).")
    assert not any(p.endswith(("silica.vrt", "secret.tif")) for p in opened)  # GDAL never opened either
    assert not (tmp_path / "run").exists()
    # the same VRT reading a copy inside the case is read, and its source's checksum recorded for a replay
    shutil.copy(elsewhere / "secret.tif", case / "inside.tif")
    _vrt(case / "silica.vrt", case / "silica.tif", "inside.tif")
    result = run_analysis(_request(case, tmp_path / "run"))
    record = json.loads(Path(result.outputs["record"]).read_text(encoding="utf-8"))
    entry = next(e for e in record["inputs"] if e["path"].endswith("silica.vrt"))
    assert list(entry["sidecars"]) == [str((case / "inside.tif").resolve())]
    # ... and a replay after that source changed is refused, naming it
    with rasterio.open(case / "inside.tif", "r+") as ds:
        ds.write(ds.read() + 1)
    with pytest.raises(LodestarError) as caught:
        run_analysis(AnalysisRequest([], "", tmp_path / "replay", replay=result.outputs["record"]))
    assert _one_line(str(caught.value)) == ("inside.tif, beside input 'ASTER TIR quartz index', is missing or changed "
                                            "since the run was recorded; replay needs the same files.")
    assert not (tmp_path / "replay").exists()


# ------------------------------------------------------------------- item 2: network paths, named, no request
@pytest.mark.parametrize("where", ["vrt source", "vrt inside a vrt", "case path"])
def test_a_network_path_is_refused_and_named_before_any_request(tmp_path, loopback, monkeypatch, where):
    case = _case(tmp_path / "shared")
    url = f"/vsicurl/http://127.0.0.1:{loopback.server_address[1]}/secret.tif"
    if where == "case path":
        _set_path(case, "silica.tif", url)
    else:
        _vrt(case / "remote.vrt", case / "silica.tif", url, relative=False)
        if where == "vrt inside a vrt":
            _vrt(case / "silica.vrt", case / "silica.tif", "remote.vrt")
        _set_path(case, "silica.tif", "silica.vrt" if where == "vrt inside a vrt" else "remote.vrt")
    opened = _spy_opens(monkeypatch)
    with pytest.raises(LodestarError) as caught:
        run_analysis(_request(case, tmp_path / "run"))
    assert loopback.seen == []  # not a HEAD, not a GET
    message = _one_line(str(caught.value))
    assert url in message and ("is a network path" in message or "reads the network path" in message)
    assert "made no request" in message
    assert not any(".vrt" in p or "vsicurl" in p for p in opened)
    assert not (tmp_path / "run").exists()


# ------------------------------------------------------------------ item 2: a replayed record edited to read more
@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """A real offline run of the sample case: (case folder, its record as a dict)."""
    folder = tmp_path_factory.mktemp("recorded")
    case = _case(folder)
    result = run_analysis(_request(case, folder / "run"))
    return case, json.loads(Path(result.outputs["record"]).read_text(encoding="utf-8"))


@pytest.mark.parametrize("edit", ["sha256 deleted", "legend_sha256 deleted", "input outside",
                                  "deposits_sha256 deleted"])
def test_a_replay_refuses_a_record_without_checksums_or_reading_outside(recorded, tmp_path, edit):
    case, source = recorded
    record = json.loads(json.dumps(source))
    secret = tmp_path / "elsewhere" / "passwords.csv"
    secret.parent.mkdir()
    secret.write_text(f"code,name\n1,{SECRET}\n2,{SECRET}-2\n", encoding="utf-8")
    aloh = next(e for e in record["inputs"] if e["path"].endswith("aloh.tif"))
    geology = next(e for e in record["inputs"] if e["legend"])
    if edit == "sha256 deleted":
        del aloh["sha256"]
        expected = ("Replay refused: the run record has no sha256 for input 'ASTER AlOH (sericite) index'; replay "
                    "reads only files whose checksums the record holds: replay the record.json the run wrote, "
                    "unedited, or run the analysis again.")
    elif edit == "legend_sha256 deleted":  # and the legend pointed at any local file
        geology["legend"] = str(secret)
        del geology["legend_sha256"]
        expected = ("Replay refused: the run record has no legend_sha256 for the legend of input 'geological map'; "
                    "replay reads only files whose checksums the record holds: replay the record.json the run wrote, "
                    "unedited, or run the analysis again.")
    elif edit == "input outside":  # the same bytes elsewhere: the checksum matches, the place does not
        shutil.copy(case / "aloh.tif", secret.parent / "aloh.tif")
        aloh["path"] = str(secret.parent / "aloh.tif")
        expected = (f"Replay refused: input 'ASTER AlOH (sericite) index' names {secret.parent / 'aloh.tif'}, which "
                    f"lies outside {case.resolve()}, the folder its files were read from; replay the record.json the "
                    "run wrote, unedited.")
    else:
        record["parameters"]["deposits"] = str(secret)
        del record["parameters"]["deposits_sha256"]
        expected = ("Replay refused: the run record has no deposits_sha256 of the known deposits; replay reads only "
                    "files whose checksums the record holds: replay the record.json the run wrote, unedited, or run "
                    "the analysis again.")
    path = tmp_path / "record.json"
    path.write_text(json.dumps(record), encoding="utf-8")
    lines = []
    with pytest.raises(LodestarError) as caught:
        run_analysis(AnalysisRequest([], "", tmp_path / "replay", replay=path), Progress(on_log=lines.append),
                     lambda event: lines.append(json.dumps(event)))
    assert _one_line(str(caught.value)) == expected
    assert SECRET not in str(caught.value) and not any(SECRET in line for line in lines)
    assert not (tmp_path / "replay").exists()


# --------------------------------------------------------------------- item 5: one layer of a GeoPackage, by name
def _two_layers(case: Path) -> Path:
    """two.gpkg: a decoy layer of polygons first, then the case's fault lines as 'faults'."""
    faults = gpd.read_file(case / "faults.geojson")
    gpkg = case / "two.gpkg"
    gpd.GeoDataFrame({"name": ["decoy"]}, geometry=[box(*faults.total_bounds)], crs=faults.crs).to_file(
        gpkg, layer="decoy")
    faults.to_file(gpkg, layer="faults")
    (case / "faults.geojson").unlink()
    return gpkg


def test_a_geopackage_layer_is_named_as_qgis_names_it_and_a_file_of_several_without_a_name_is_refused(tmp_path):
    case = _case(tmp_path / "shared")
    _two_layers(case)
    _set_path(case, "faults.geojson", "two.gpkg|layername=faults")
    read = read_case(case)
    spec = next(s for s in read.layers if s.role == "structure")
    assert (spec.path, spec.layer, spec.name) == (case / "two.gpkg", "faults", "mapped faults")
    features = RasterSet(read.layers).features("mapped faults")
    assert set(features.geom_type) == {"LineString"} and len(features) == len(
        gpd.read_file(case / "two.gpkg", layer="faults"))
    result = run_analysis(_request(case, tmp_path / "run"))
    record = json.loads(Path(result.outputs["record"]).read_text(encoding="utf-8"))
    assert next(e for e in record["inputs"] if e["name"] == "mapped faults")["layer"] == "faults"
    # without a name the run is refused, naming the layers, before any model call
    _set_path(case, "two.gpkg|layername=faults", "two.gpkg")
    with pytest.raises(LodestarError) as caught:
        run_analysis(_request(case, tmp_path / "run2"))
    assert _one_line(str(caught.value)) == (
        "Layer mapped faults: two.gpkg holds 2 layers (decoy, faults); name the one to read as "
        "two.gpkg|layername=NAME (QGIS's own way), e.g. two.gpkg|layername=faults.")
    assert not (tmp_path / "run2").exists()


# --------------------------------------------------------------------------------- item 6: a folder as a layer
def test_a_folder_given_as_a_layer_path_is_a_clear_message(tmp_path):
    case = _case(tmp_path / "shared")
    (case / "sub.gpkg").mkdir()
    shutil.move(case / "faults.geojson", case / "sub.gpkg" / "faults.geojson")
    _set_path(case, "faults.geojson", "sub.gpkg/")
    with pytest.raises(LodestarError) as caught:
        run_analysis(_request(case, tmp_path / "run"))
    assert _one_line(str(caught.value)) == (
        f"{case / 'case.json'}: layer 6's 'path' 'sub.gpkg/' is a folder, not a file; name the raster or vector file "
        "itself (e.g. one of the files inside it).")
    # the same folder reaching the core another way (the dock, a script) is refused up front too
    layers = [LayerSpec(case / "aloh.tif", "hydrothermal_alteration"), LayerSpec(case / "sub.gpkg", "structure")]
    with pytest.raises(LodestarError) as caught:
        question = json.loads((case / "case.json").read_text(encoding="utf-8"))["question"]
        run_analysis(AnalysisRequest(layers, question, tmp_path / "run"))
    assert _one_line(str(caught.value)) == (
        f"Layer sub: {case / 'sub.gpkg'} is a folder, not a vector file; give the file itself (a GeoPackage, "
        "Shapefile or GeoJSON file), e.g. one of the files inside it.")
    assert not (tmp_path / "run").exists()


# ------------------------------------------------------------------- item 7: empty vectors, before any model call
@pytest.mark.parametrize("backend", ["offline", "model server"])
@pytest.mark.parametrize("emptiness", ["zero bytes", "zero features"])
def test_an_empty_vector_is_refused_before_any_model_call(tmp_path, backend, emptiness):
    case = _case(tmp_path / "shared")
    if emptiness == "zero bytes":
        (case / "faults.geojson").write_bytes(b"")
        expected = f"Layer mapped faults: {case / 'faults.geojson'} is empty (0 bytes): export the layer again (a " \
                   "complete copy), or leave it out."
    else:
        (case / "faults.geojson").write_text('{"type": "FeatureCollection", "features": []}', encoding="utf-8")
        expected = ("Layer mapped faults: faults.geojson holds no features: give a layer with its features (fault "
                    "lines, unit polygons), or leave it out.")
    with FakeOpenAIServer(lambda request: Reply(status=500)) as server:
        settings = BackendSettings() if backend == "offline" else BackendSettings(
            backend="openai", base_url=server.base_url, models={r: "m" for r in ("planner", "executor", "verifier")},
            max_retries=0, timeout_s=5, deadline_s=5)
        with pytest.raises(LodestarError) as caught:
            run_analysis(_request(case, tmp_path / "run", settings))
        assert server.chat_requests == []
    assert _one_line(str(caught.value)) == expected
    assert not (tmp_path / "run").exists()


# ------------------------------------------------------------------------ item 12: a key repeated in case.json
@pytest.mark.parametrize("where", ["top level", "in a layer"])
def test_a_key_repeated_in_case_json_is_refused_naming_it(tmp_path, where):
    case = _case(tmp_path / "shared")
    text = (case / "case.json").read_text(encoding="utf-8")
    if where == "top level":
        text = text.replace('"question":', '"question": "Is there gold? Answer: A. Yes B. No.",\n  "question":', 1)
        key = "question"
    else:
        text = text.replace('"role": "structure"', '"role": "structure", "role": "geological_map"', 1)
        key = "role"
    (case / "case.json").write_text(text, encoding="utf-8")
    with pytest.raises(LodestarError) as caught:
        read_case(case)
    assert _one_line(str(caught.value)) == (
        f"{case / 'case.json'}: the key {key!r} appears 2 times in one object (JSON keeps only the last, silently); "
        "keep one of them.")


# ------------------------------------------------------------------ lodestar:analyze: one line, a non-zero exit
@pytest.mark.parametrize("scenario", ["vrt outside", "empty vector", "repeated key", "several layers",
                                      "replay without a checksum"])
def test_analyze_refuses_each_in_one_line_and_writes_nothing(run, recorded, tmp_path, scenario):
    from qgis.core import QgsProcessingException

    case = _case(tmp_path / "shared")
    given = {"CASE": str(case / "case.json")}
    if scenario == "replay without a checksum":
        record = json.loads(json.dumps(recorded[1]))
        del record["inputs"][0]["sha256"]
        (tmp_path / "edited.json").write_text(json.dumps(record), encoding="utf-8")
        given = {"REPLAY": str(tmp_path / "edited.json")}
        expected = "Replay refused: the run record has no sha256 for input 'geological map'; "
    elif scenario == "several layers":  # a layer of RASTERS (Processing loads the file's first layer)
        _two_layers(case)
        given = {"RASTERS": [str(case / "aloh.tif"), str(case / "two.gpkg")],
                 "ROLES": "hydrothermal_alteration,structure", "QUESTION": QUESTION}
        expected = "Layer two: two.gpkg holds 2 layers (decoy, faults); name the one to read as two.gpkg|layername="
    elif scenario == "vrt outside":
        (tmp_path / "elsewhere").mkdir()
        shutil.copy(case / "silica.tif", tmp_path / "elsewhere" / "secret.tif")
        _vrt(case / "silica.vrt", case / "silica.tif", str(tmp_path / "elsewhere" / "secret.tif"))
        _set_path(case, "silica.tif", "silica.vrt")
        expected = f"silica.vrt reads '{tmp_path / 'elsewhere' / 'secret.tif'}', which lies outside {case.resolve()}"
    elif scenario == "empty vector":
        (case / "faults.geojson").write_bytes(b"")
        expected = f"Layer mapped faults: {case / 'faults.geojson'} is empty (0 bytes)"
    else:
        text = (case / "case.json").read_text(encoding="utf-8")
        (case / "case.json").write_text(text.replace('"id":', '"id": "first",\n  "id":', 1), encoding="utf-8")
        expected = f"{case / 'case.json'}: the key 'id' appears 2 times in one object"
    out = tmp_path / "out"
    outputs = {key: str(out / name) for key, name in (
        ("OUTPUT_ZONES", "zones.gpkg"), ("OUTPUT_PROSPECTIVITY", "targets.gpkg"), ("OUTPUT_REPORT", "report.html"),
        ("OUTPUT_RECORD", "record.json"), ("OUTPUT_FAVOURABILITY", "fav.tif"), ("OUTPUT_WEIGHTS", "weights.csv"))}
    with pytest.raises(QgsProcessingException) as caught:
        run("lodestar:analyze", {**given, **outputs})
    assert _one_line(str(caught.value)).startswith(expected)
    assert not out.exists() or not any(out.iterdir())


# ------------------------------- issue 60: every file a raster opens, as GDAL lists it, stays inside its case
HAND_COMMENT = "<!-- written by hand -> checked against the field map -->\n"
"""A comment before a VRT's root (with a '>' inside, as people write): GDAL still reads the file as a VRT."""


def _preceded(vrt: Path, text: str) -> Path:
    """`vrt` with `text` (a comment, a note) before its root element."""
    vrt.write_text(text + vrt.read_text(encoding="utf-8"), encoding="utf-8")
    return vrt


def _ers(case: Path, like: str, data: str) -> Path:
    """An ER Mapper dataset with `like`'s pixels: the header `<stem>.ers` GDAL's ERS driver writes, pointed at the
    data file `data` (relative to the header, as ERS names it), and its CRS in the .aux.xml beside it (Debian's GDAL
    lacks the tables ERS's own projection names need). GDAL reads the .aux.xml only with its PAM on."""
    header = case / f"{Path(like).stem}.ers"
    with rasterio.open(case / like) as ds:
        wkt = ds.crs.to_wkt()
    assert gdal.Translate(str(header), str(case / like), format="ERS") is not None
    target = header.parent / data
    target.parent.mkdir(parents=True, exist_ok=True)
    header.with_suffix("").replace(target)  # GDAL names the data file after the header, without a suffix
    text = header.read_text(encoding="ascii")
    header.write_text(text.replace("DatasetHeader Begin", f'DatasetHeader Begin\n\tDataFile\t= "{data}"', 1),
                      encoding="ascii")
    Path(f"{header}.aux.xml").write_text(f"<PAMDataset>\n  <SRS>{escape(wkt)}</SRS>\n</PAMDataset>\n",
                                         encoding="utf-8")
    return header


def _snapshot(folder: Path) -> dict:
    """Every file under `folder`: its bytes and modification time."""
    return {str(p.relative_to(folder)): (p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("before", ["a comment", "a note"])
def test_a_vrt_with_text_before_its_root_reading_outside_the_case_is_refused(tmp_path, monkeypatch, before):
    case = _case(tmp_path / "shared")
    (tmp_path / "elsewhere").mkdir()
    shutil.copy(case / "silica.tif", tmp_path / "elsewhere" / "secret.tif")
    _preceded(_vrt(case / "silica.vrt", case / "silica.tif", "../../elsewhere/secret.tif"),
              HAND_COMMENT if before == "a comment" else "Quartz index, clipped to the licence.\n")
    _set_path(case, "silica.tif", "silica.vrt")
    opened = _spy_opens(monkeypatch)
    with pytest.raises(LodestarError) as caught:
        run_analysis(_request(case, tmp_path / "run"))
    if before == "a comment":  # the parser reads past the comment to the source
        expected = (f"silica.vrt reads '../../elsewhere/secret.tif', which lies outside {case.resolve()}; a dataset "
                    "may read only files inside the case folder (or its own folder): copy the file there and point "
                    "the VRT at it, or save the VRT as a GeoTIFF (Raster > Conversion > Translate).")
        assert _one_line(str(caught.value)) == expected
    else:  # GDAL reads it as a VRT, but it is no XML document: nothing of it is read
        assert _one_line(str(caught.value)).startswith(
            "silica.vrt is not a readable VRT: GDAL reads it as one, but it is not one XML document (")
    assert not any(p.endswith(("silica.vrt", "secret.tif")) for p in opened)
    assert not (tmp_path / "run").exists()


def test_a_clean_vrt_reading_a_commented_vrt_reading_outside_is_refused_naming_both(tmp_path, monkeypatch):
    case = _case(tmp_path / "shared")
    (tmp_path / "elsewhere").mkdir()
    shutil.copy(case / "silica.tif", tmp_path / "elsewhere" / "secret.tif")
    (case / "inner").mkdir()
    _preceded(_vrt(case / "inner" / "quartz.vrt", case / "silica.tif", "../../../elsewhere/secret.tif"),
              HAND_COMMENT)
    _vrt(case / "silica.vrt", case / "silica.tif", "inner/quartz.vrt")
    _set_path(case, "silica.tif", "silica.vrt")
    opened = _spy_opens(monkeypatch)
    with pytest.raises(LodestarError) as caught:
        run_analysis(_request(case, tmp_path / "run"))
    assert _one_line(str(caught.value)) == (
        f"silica.vrt reads '../../../elsewhere/secret.tif' (named in quartz.vrt), which lies outside {case.resolve()}; "
        "a dataset may read only files inside the case folder (or its own folder): copy the file there and point the "
        "VRT at it, or save the VRT as a GeoTIFF (Raster > Conversion > Translate).")
    assert not any(p.endswith((".vrt", "secret.tif")) for p in opened)
    assert not (tmp_path / "run").exists()


def test_an_ers_header_whose_data_file_lies_outside_the_case_is_refused(tmp_path, monkeypatch, pam_read):
    case = _case(tmp_path / "shared")
    _ers(case, "silica.tif", "../../elsewhere/silica.raw")
    _set_path(case, "silica.tif", "silica.ers")
    opened = _spy_opens(monkeypatch)
    with pytest.raises(LodestarError) as caught:
        run_analysis(_request(case, tmp_path / "run"))
    outside = tmp_path / "elsewhere" / "silica.raw"
    assert _one_line(str(caught.value)) == (
        f"silica.ers reads '{outside}', which lies outside {case.resolve()}; a dataset may read only files inside the "
        "case folder (or its own folder): copy the file there and point the dataset at it, or save the dataset as a "
        "GeoTIFF (Raster > Conversion > Translate).")
    assert not any(p.endswith("silica.ers") for p in opened)  # listed by GDAL, never read for its pixels
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("described", ["a vrt with a comment", "a vrt after a note", "a wmts description"])
def test_a_remote_source_behind_text_before_the_root_makes_no_request(tmp_path, loopback, monkeypatch, described):
    case = _case(tmp_path / "shared")
    server = f"http://127.0.0.1:{loopback.server_address[1]}"
    if described == "a wmts description":  # GDAL's WMTS driver reads it: a web service, not a file
        (case / "silica.xml").write_text(
            f"{HAND_COMMENT}<GDAL_WMTS><GetCapabilitiesUrl>{server}/capabilities.xml</GetCapabilitiesUrl></GDAL_WMTS>",
            encoding="utf-8")
        _set_path(case, "silica.tif", "silica.xml")
        expected = ("silica.xml is read by GDAL's WMTS driver, which reads a server or a database, not files; save the "
                    "data as a GeoTIFF or GeoPackage in the case folder and use that.")
    else:
        url = f"/vsicurl/{server}/secret.tif"
        _preceded(_vrt(case / "silica.vrt", case / "silica.tif", url, relative=False),
                  HAND_COMMENT if described == "a vrt with a comment" else "Quartz index, served by the lab.\n")
        _set_path(case, "silica.tif", "silica.vrt")
        expected = (f"silica.vrt reads the network path '{url}'; Lodestar reads only local files and made no request: "
                    "download the data into the case folder and point the VRT at the copy.")
    opened = _spy_opens(monkeypatch)
    with pytest.raises(LodestarError) as caught:
        run_analysis(_request(case, tmp_path / "run"))
    assert loopback.seen == []  # not a HEAD, not a GET
    assert _one_line(str(caught.value)) == expected
    assert not any(p.endswith(("silica.vrt", "silica.xml")) for p in opened)
    assert not (tmp_path / "run").exists()


def test_under_lodestar_s_guards_gdal_reaches_no_server(tmp_path, loopback, monkeypatch):
    """The second fence, for whatever a check might miss: with `guarded_gdal` on, neither a /vsicurl/ file nor a web
    service's tiles are requested; the same opens without it do reach the server."""
    for key in ("NO_PROXY", "no_proxy"):  # curl sends a host named there past any proxy
        monkeypatch.delenv(key, raising=False)
    server = f"http://127.0.0.1:{loopback.server_address[1]}"
    wms = tmp_path / "tiles.xml"
    wms.write_text(f"<GDAL_WMS><Service name='TMS'><ServerUrl>{server}/${{z}}/${{x}}/${{y}}.png</ServerUrl></Service>"
                   "<DataWindow><UpperLeftX>-20037508.34</UpperLeftX><UpperLeftY>20037508.34</UpperLeftY>"
                   "<LowerRightX>20037508.34</LowerRightX><LowerRightY>-20037508.34</LowerRightY><TileLevel>1"
                   "</TileLevel><TileCountX>1</TileCountX><TileCountY>1</TileCountY></DataWindow><Projection>EPSG:3857"
                   "</Projection><BlockSizeX>256</BlockSizeX><BlockSizeY>256</BlockSizeY><BandsCount>1</BandsCount>"
                   "</GDAL_WMS>", encoding="utf-8")

    def attempt(path: str) -> None:
        try:
            with rasterio.open(path) as ds:
                ds.read(1, window=((0, 16), (0, 16)))
        except (rasterio.errors.RasterioError, rasterio.errors.RasterioIOError):
            pass

    with guarded_gdal():
        attempt(f"/vsicurl/{server}/guarded.tif")
        attempt(str(wms))
    assert loopback.seen == []
    attempt(f"/vsicurl/{server}/open.tif")
    attempt(str(wms))
    assert any(seen.endswith("/open.tif") for seen in loopback.seen)
    assert any(seen.startswith("GET /1/") for seen in loopback.seen)


@pytest.mark.parametrize("changed", ["the ERS data file", "the ERS .aux.xml", "a nested VRT's source"])
def test_every_file_gdal_lists_is_checksummed_and_a_replay_after_one_changed_is_refused(tmp_path, monkeypatch,
                                                                                     changed, pam_read):
    case = _case(tmp_path / "shared")
    if changed == "a nested VRT's source":
        shutil.copy(case / "silica.tif", case / "inside.tif")
        _preceded(_vrt(case / "quartz.vrt", case / "silica.tif", "inside.tif"), HAND_COMMENT)
        _vrt(case / "silica.vrt", case / "silica.tif", "quartz.vrt")
        _set_path(case, "silica.tif", "silica.vrt")
        read = {"quartz.vrt", "inside.tif"}
        file = case / "inside.tif"
    else:
        _ers(case, "silica.tif", "silica.raw")
        _set_path(case, "silica.tif", "silica.ers")
        read = {"silica.raw", "silica.ers.aux.xml"}
        file = case / ("silica.raw" if changed == "the ERS data file" else "silica.ers.aux.xml")
    result = run_analysis(_request(case, tmp_path / "run"))
    record = json.loads(Path(result.outputs["record"]).read_text(encoding="utf-8"))
    entry = next(e for e in record["inputs"] if e["name"] == "ASTER TIR quartz index")
    assert {Path(p).name for p in entry["sidecars"]} == read
    assert all(entry["sidecars"][str((case / name).resolve())] == sha256_file(case / name) for name in read)
    if file.suffix == ".xml":  # a PAM sidecar can change what GDAL reads (a nodata value, the CRS)
        file.write_text(file.read_text(encoding="utf-8").replace(
            "</PAMDataset>", '  <Metadata><MDI key="edited">yes</MDI></Metadata>\n</PAMDataset>'), encoding="utf-8")
    else:
        data = bytearray(file.read_bytes())
        data[-1] ^= 0xFF
        file.write_bytes(bytes(data))
    with pytest.raises(LodestarError) as caught:
        run_analysis(AnalysisRequest([], "", tmp_path / "replay", replay=result.outputs["record"]))
    assert _one_line(str(caught.value)) == (f"{file.name}, beside input 'ASTER TIR quartz index', is missing or "
                                            "changed since the run was recorded; replay needs the same files.")
    assert not (tmp_path / "replay").exists()


def test_analyze_reads_rasters_given_by_their_files_and_writes_nothing_beside_them(run, tmp_path, pam_read):
    """Scenario 18: RASTERS (no case) names VRTs; QGIS, loading a raster as a layer, computes its statistics and
    GDAL keeps them, rewriting a VRT (its comment dropped) or writing a .aux.xml. The files are only read: the
    folder's files, bytes and times are the same after the run, and after a CASE run over the same VRTs."""
    case = _case(tmp_path / "shared")
    names = ("aloh", "silica", "propylitic")
    for name in names:
        assert gdal.Translate(str(case / f"{name}.vrt"), str(case / f"{name}.tif"), format="VRT") is not None
        _preceded(case / f"{name}.vrt", HAND_COMMENT)
    before = _snapshot(case)
    out = tmp_path / "out"
    outputs = {key: str(out / name) for key, name in (
        ("OUTPUT_ZONES", "zones.gpkg"), ("OUTPUT_PROSPECTIVITY", "targets.gpkg"), ("OUTPUT_REPORT", "report.html"),
        ("OUTPUT_RECORD", "record.json"))}
    result = run("lodestar:analyze", {"RASTERS": [str(case / f"{name}.vrt") for name in names],
                                      "ROLES": "hydrothermal_alteration,silicification,propylitic_alteration",
                                      "QUESTION": QUESTION, **outputs})
    assert result["ANSWER"] == "A"
    record = json.loads(Path(result["OUTPUT_RECORD"]).read_text(encoding="utf-8"))
    assert [(Path(e["path"]).name, e["name"], [Path(p).name for p in e["sidecars"]]) for e in record["inputs"]] == [
        (f"{name}.vrt", name, [f"{name}.tif"]) for name in names]
    assert _snapshot(case) == before
    for name in names:
        _set_path(case, f"{name}.tif", f"{name}.vrt")
    before = _snapshot(case)
    result = run("lodestar:analyze", {"CASE": str(case / "case.json"),
                                      **{key: path.replace("out", "out-case") for key, path in outputs.items()}})
    assert result["ANSWER"] == "A"
    assert _snapshot(case) == before
