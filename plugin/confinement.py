"""Input confinement: which files a GDAL or OGR dataset reads, checked before GDAL reads its data.

A shared case (or a run record, or a layer) must not make Lodestar read files elsewhere on the machine, nor reach
the network:

- a path's text: a network path (`/vsicurl/`, `/vsis3/`, `/vsigs/`, `/vsiaz/`, ..., `http://`), any other GDAL
  virtual file system (`/vsizip/`, ...) and any connection string (`NETCDF:...`) are refused and named, before any
  request (`check_path_text`);
- a dataset's files, as GDAL lists them (`referenced_files`): GDAL names the driver that reads the file. A VRT
  (raster or OGR) is read as XML by a real parser (a comment or any text before its root changes nothing), and
  every dataset it names is checked, recursively, before GDAL opens the VRT (GDAL opens a VRT's sources as it opens
  it). A driver that reads a server rather than files (`<GDAL_WMS>`, `WFS:`, ...) is refused. Then the dataset is
  opened with GDAL's guards on and its own file list (`GetFileList`: a VRT's sources, the data file an ERS header
  names, world files, overviews, a .aux.xml) is checked, each listed file in turn as a dataset. Every file must
  resolve inside `root` (the case folder; without one, the dataset's own folder);
- `guarded_gdal`: the GDAL settings, for the calling thread, under which GDAL reaches no server (no `/vsicurl/`
  family file opens, HTTP goes to a proxy on a closed local port) and runs no Python from a VRT. The checks and
  every read run under them (a second fence, for what the first two might miss).

`referenced_files` returns the files a dataset reads besides itself, so a run record holds their checksums and a
replay refuses when one changed; `dataset_driver` names the driver they were checked with, for the read to use.
"""
from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ElementTree
from contextlib import contextmanager
from pathlib import Path

from osgeo import gdal

from .errors import LodestarError

NETWORK_VSI = re.compile(r"/vsi(?:curl|s3|gs|az|adls|oss|swift|webhdfs|hdfs)\w*[/?]", re.IGNORECASE)
"""GDAL's network virtual file systems: searched for anywhere in a VRT."""
NETWORK = re.compile(NETWORK_VSI.pattern + r"|\b(?:https?|ftps?|s3|gs|az|wasbs?|abfss?|wms|wfs)://?", re.IGNORECASE)
"""Network paths GDAL would request, as a path: its network file systems and URLs (`//` may be folded to `/`)."""
VIRTUAL = re.compile(r"^/vsi\w*/", re.IGNORECASE)
CONNECTION = re.compile(r"^[A-Za-z][\w+.-]+:(?![\\/])|^[A-Za-z][\w+.-]+://")
"""A driver prefix or URL ('NETCDF:x.nc:var', 'PG:dbname=...', 'vrt://...'); a Windows drive ('C:\\') is not."""
SOURCE_TAGS = {"sourcefilename", "sourcedataset", "srcdatasource"}
"""Elements of a raster VRT (simple, complex, raw, warped, overview, mask, pansharpened sources) and an OGR VRT that
name a dataset."""
VRT_DRIVERS = {"VRT": "vrtdataset", "OGR_VRT": "ogrvrtdatasource"}
"""GDAL's VRT drivers and the root element of the XML each reads."""
SERVICE_DRIVERS = {"WMS", "WCS", "HTTP", "OGCAPI", "STACTA", "STACIT", "KMLSUPEROVERLAY", "PostGISRaster"}
"""Drivers that read a web service or a database rather than files, besides those GDAL gives a connection prefix
('WMTS:', 'WFS:', 'PG:', ...: `_service_driver`)."""
GUARDS = {
    "CPL_VSIL_CURL_ALLOWED_FILENAME": "none: Lodestar reads local files only",  # no /vsicurl/ family file opens
    "GDAL_HTTP_PROXY": "127.0.0.1:0", "GDAL_HTTPS_PROXY": "127.0.0.1:0",  # a port nothing listens on
    "GDAL_HTTP_MAX_RETRY": "0",
    "GML_DOWNLOAD_WFS_SCHEMA": "NO",
    "GDAL_VRT_ENABLE_PYTHON": "NO",
}
"""GDAL settings under which it reaches no server and runs no code of a dataset's (`guarded_gdal`)."""
MAX_VRT_BYTES = 64 << 20
MAX_DEPTH = 8


def network_part(text, pattern=NETWORK) -> str:
    """The network path inside `text` (from its network prefix on), or ''."""
    text = str(text)
    match = pattern.search(text)
    return re.split(r"[\s<>\"']", text[match.start():], maxsplit=1)[0][:200] if match else ""


def check_path_text(text, what: str) -> None:
    """Refuse, from its text alone, a path that is a network path, a GDAL virtual file system or a connection
    string: Lodestar reads local files only. `what` names it in the message ('layer 1's 'path'')."""
    text = str(text).strip()
    remote = network_part(text)
    if remote:
        raise LodestarError(f"{what} {remote!r} is a network path; Lodestar reads only local files and made no "
                            "request: download the data into the case folder and name the local copy.")
    if VIRTUAL.match(text.replace("\\", "/")):
        raise LodestarError(f"{what} {text[:200]!r} is a GDAL virtual file system path; Lodestar reads only plain "
                            "files: extract the data into the case folder and name the file.")
    if CONNECTION.match(text):
        raise LodestarError(f"{what} {text[:200]!r} is a driver or database connection string, not a file; save the "
                            "layer as a file (GeoTIFF, GeoPackage) in the case folder and name that.")


@contextmanager
def guarded_gdal():
    """GDAL, in this block and this thread, reaches no server and runs no Python pixel function (`GUARDS`); the
    settings of other threads (QGIS drawing a web layer) are left as they are."""
    before = {key: gdal.GetThreadLocalConfigOption(key) for key in GUARDS}
    for key, value in GUARDS.items():
        gdal.SetThreadLocalConfigOption(key, value)
    try:
        yield
    finally:
        for key, value in before.items():
            gdal.SetThreadLocalConfigOption(key, value)


def dataset_driver(path, *, raster: bool = True) -> str | None:
    """The short name of the GDAL driver that reads the file at `path` as a raster (or a vector), as GDAL itself
    identifies it without opening it for its data; None when no driver reads it (or it is no file)."""
    if not Path(path).is_file():
        return None
    with guarded_gdal(), _quiet():
        try:
            driver = gdal.IdentifyDriverEx(os.fspath(Path(path).absolute()),
                                           gdal.OF_RASTER if raster else gdal.OF_VECTOR)
        except RuntimeError:  # another plugin turned GDAL's exceptions on
            return None
    return driver.ShortName if driver is not None else None


def referenced_files(path, root=None, *, raster: bool = True) -> list[Path]:
    """The files the dataset at `path` reads besides itself (a VRT's sources and those of VRTs it reads, the data
    file of an ERS header, sidecars and overviews: GDAL's own file list, recursively), resolved; LodestarError when
    one lies outside `root` (default: the dataset's own folder), is a network path, a virtual file system or a
    connection string, or when a driver for a server reads the file. A VRT's sources are checked before GDAL opens
    it. `raster`: the path is read as a raster (else as a vector)."""
    path = Path(path)
    check_path_text(path, f"{path.name}: the path")
    root = Path(root).resolve() if root is not None else path.resolve().parent
    found: list[Path] = []
    _collect(path, root, raster, found, [])
    return found


def _collect(path: Path, root: Path, raster: bool, found: list, chain: list) -> None:
    """Add to `found` the files `path` reads, each checked (`referenced_files`); `chain`: the datasets reading it
    (its first, the dataset asked about, is the one messages name)."""
    driver = dataset_driver(path, raster=raster)
    if driver is None:
        return  # not a dataset GDAL reads: its reader says so
    top = chain[0] if chain else path
    if len(chain) >= MAX_DEPTH or path.resolve() in chain:
        raise LodestarError(f"{top.name} reads datasets nested more than {MAX_DEPTH} deep, or in a loop; save it as "
                            "a GeoTIFF (Raster > Conversion > Translate) and use that.")
    if _service_driver(driver):
        raise LodestarError(f"{top.name} is read by GDAL's {driver} driver, which reads a server or a database, "
                            "not files; save the data as a GeoTIFF or GeoPackage in the case folder and use that.")
    inner = chain + [path.resolve()]
    if driver in VRT_DRIVERS:  # checked before GDAL opens the VRT, which opens its sources
        for source, target in _vrt_sources(path, driver, top):
            _add(target, source, root, raster, found, inner)
    for listed in _file_list(path, driver, raster):
        if listed.resolve() not in inner:  # a Shapefile's .dbf lists its .shp: a part, not a loop
            _add(listed, os.path.normpath(listed), root, raster, found, inner)


def _add(target: Path, named: str, root: Path, raster: bool, found: list, chain: list) -> None:
    """Check one file a dataset reads (`named` as the dataset names it) and what it reads in turn."""
    top = chain[0]
    check_path_text(named, f"{top.name}: its source")
    target = target.resolve()  # an absolute source stays itself
    through = f" (named in {chain[-1].name})" if len(chain) > 1 else ""
    if not target.is_relative_to(root):
        kind = "VRT" if dataset_driver(top, raster=raster) in VRT_DRIVERS else "dataset"
        raise LodestarError(f"{top.name} reads {named!r}{through}, which lies outside {root}; a dataset may read only "
                            f"files inside the case folder (or its own folder): copy the file there and point the "
                            f"{kind} at it, or save the {kind} as a GeoTIFF (Raster > Conversion > Translate).")
    if target.is_dir():
        raise LodestarError(f"{top.name} reads {named!r}{through}, a folder; point it at a raster or vector file.")
    if target in found:
        return
    found.append(target)
    if target.is_file():
        _collect(target, root, raster, found, chain)


def _service_driver(driver: str) -> bool:
    """Whether the driver reads a server or a database (`SERVICE_DRIVERS`, or any with a connection prefix)."""
    meta = gdal.GetDriverByName(driver).GetMetadata() or {}
    return driver in SERVICE_DRIVERS or bool(meta.get("DMD_CONNECTION_PREFIX"))


def _vrt_sources(path: Path, driver: str, top: Path) -> list[tuple[str, Path]]:
    """(as written, where GDAL looks) for every dataset a VRT names, read with an XML parser: comments and
    declarations are no elements, and a file that is not one XML document of the VRT's root is refused."""
    size = path.stat().st_size
    if size > MAX_VRT_BYTES:
        raise LodestarError(f"{top.name} reads {path.name}, a VRT of {size / 2 ** 20:.0f} MB (at most "
                            f"{MAX_VRT_BYTES >> 20} MB are read); save it as a GeoTIFF and use that.")
    data = path.read_bytes().lstrip(b"\xef\xbb\xbf \t\r\n")
    text = data.decode("utf-8", errors="replace")
    remote = network_part(text, NETWORK_VSI)
    if remote:  # anywhere in the VRT: a source, an option, a nested description
        raise LodestarError(f"{top.name} reads the network path {remote!r}; Lodestar reads only local files and made "
                            "no request: download the data into the case folder and point the VRT at the copy.")
    if re.search(r"PixelFunctionLanguage\s*=\s*[\"']?python", text, re.IGNORECASE):
        raise LodestarError(f"{top.name} holds a Python pixel function (code GDAL would run); save the result as a "
                            "GeoTIFF and use that.")
    where = path.name if path == top else f"{top.name}: {path.name}"
    try:
        tree = ElementTree.fromstring(data)
    except ElementTree.ParseError as exc:
        raise LodestarError(f"{where} is not a readable VRT: GDAL reads it as one, but it is not one XML document "
                            f"({exc}); save it again (Raster > Miscellaneous > Build Virtual Raster) or export the "
                            "data as a GeoTIFF.") from exc
    if _local_name(tree.tag) != VRT_DRIVERS[driver]:
        raise LodestarError(f"{where} is read by GDAL as a VRT, but its root element is <{_local_name(tree.tag)}>; "
                            "save it again (Raster > Miscellaneous > Build Virtual Raster) or export the data as a "
                            "GeoTIFF.")
    sources = []
    for element in tree.iter():
        if not isinstance(element.tag, str) or _local_name(element.tag) not in SOURCE_TAGS:
            continue
        source = (element.text or "").strip()
        if not source:
            continue
        check_path_text(source, f"{top.name}: its source")
        relative = {_local_name(k): v for k, v in element.attrib.items()}.get("relativetovrt", "0")
        base = path.parent if _relative(relative, driver) else Path(os.getcwd())  # as GDAL opens it
        sources.append((source, base / source))
    return sources


def _file_list(path: Path, driver: str, raster: bool) -> list[Path]:
    """GDAL's own list of the files the dataset reads, itself included, opened read-only by `driver` with the
    guards on; [] when GDAL cannot open it (its reader then says why)."""
    flags = (gdal.OF_RASTER if raster else gdal.OF_VECTOR) | gdal.OF_READONLY
    with guarded_gdal(), _quiet():
        try:
            dataset = gdal.OpenEx(os.fspath(path.absolute()), flags, allowed_drivers=[driver])
            files = dataset.GetFileList() if dataset is not None else None
        except RuntimeError:
            files = None
        dataset = None  # closed here, under the guards
    return [Path(name) for name in files or []]


@contextmanager
def _quiet():
    """GDAL's error messages kept off stderr (the reader reports what matters, in one line)."""
    gdal.PushErrorHandler("CPLQuietErrorHandler")
    try:
        yield
    finally:
        gdal.PopErrorHandler()


def _local_name(tag: str) -> str:
    """An element or attribute name without its namespace or prefix, lower case (GDAL compares them so)."""
    return tag.rsplit("}", 1)[-1].rsplit(":", 1)[-1].lower()


def _relative(text: str, driver: str) -> bool:
    """Whether a VRT's relativeToVRT value says its source is relative to the VRT, as GDAL reads it: a raster VRT
    by C's atoi (its leading whole number, not 0), an OGR VRT by CPLTestBool (anything but NO, FALSE, OFF, 0)."""
    if driver == "OGR_VRT":
        return text.strip().upper() not in {"NO", "FALSE", "OFF", "0"}
    match = re.match(r"\s*([+-]?\d+)", text)
    return bool(match and int(match.group(1)))
