"""Input confinement: what a GDAL or OGR path may read before GDAL ever sees it.

A shared case (or a run record, or a layer) must not make Lodestar read files elsewhere on the machine, nor reach
the network. Every path the readers open is checked here first, from its text and its first bytes only:

- a network path (`/vsicurl/`, `/vsis3/`, `/vsigs/`, `/vsiaz/`, ..., `http://`) is refused and named, before any
  request; so is any other GDAL virtual file system (`/vsizip/`, ...) and any connection string (`NETCDF:...`);
- a dataset that reads other files (a VRT, raster or vector, nested or not) is read only when every file it
  references resolves inside `root` (the case folder; without one, the dataset's own folder);
- an XML description of a remote or derived dataset (`<GDAL_WMS>`, `<OGRWFSDataSource>`, ...) is refused.

`referenced_files` returns the files a dataset reads besides itself (a VRT's sources), so a run record can hold
their checksums and a replay can check them.
"""
from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ElementTree
from pathlib import Path

from .errors import LodestarError

NETWORK_VSI = re.compile(r"/vsi(?:curl|s3|gs|az|adls|oss|swift|webhdfs|hdfs)\w*[/?]", re.IGNORECASE)
"""GDAL's network virtual file systems: searched for anywhere in a dataset description."""
NETWORK = re.compile(NETWORK_VSI.pattern + r"|\b(?:https?|ftps?|s3|gs|az|wasbs?|abfss?|wms|wfs)://?", re.IGNORECASE)
"""Network paths GDAL would request, as a path: its network file systems and URLs (`//` may be folded to `/`)."""
VIRTUAL = re.compile(r"^/vsi\w*/", re.IGNORECASE)
CONNECTION = re.compile(r"^[A-Za-z][\w+.-]+:(?![\\/])|^[A-Za-z][\w+.-]+://")
"""A driver prefix or URL ('NETCDF:x.nc:var', 'PG:dbname=...', 'vrt://...'); a Windows drive ('C:\\') is not."""
SOURCE_TAGS = {"sourcefilename", "sourcedataset", "srcdatasource"}
"""Elements of a raster VRT (simple, complex, warped, overview, mask sources) and an OGR VRT that name a dataset."""
VRT_ROOTS = {"vrtdataset", "ogrvrtdatasource"}
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


def referenced_files(path, root=None, *, raster: bool = True) -> list[Path]:
    """The files the dataset at `path` reads besides itself (a VRT's sources, those of VRTs it reads too),
    resolved; LodestarError when one lies outside `root` (default: the dataset's own folder), is a network path,
    a virtual file system or a connection string, or when the file is an XML description of a remote dataset.
    Reads the file's text only (never through GDAL). `raster`: the path is read as a raster (any XML but a VRT is
    refused) rather than a vector (GML and KML are XML)."""
    path = Path(path)
    check_path_text(path, f"{path.name}: the path")
    root = Path(root).resolve() if root is not None else path.resolve().parent
    found: list[Path] = []
    _collect(path, root, raster, found, [])
    return found


def _collect(path: Path, root: Path, raster: bool, found: list, chain: list) -> None:
    kind = _xml_root(path)
    if kind is None:
        return
    top = chain[0] if chain else path
    if kind not in VRT_ROOTS:
        if raster or re.match(r"(gdal_|ogr|wfs|wms|wmt|wcs|capabilities|oapif|csw)", kind):
            raise LodestarError(f"{top.name} is an XML description GDAL reads through its <{kind}> driver (a "
                                "remote or derived dataset), not a data file; save the data as a GeoTIFF or "
                                "GeoPackage in the case folder and use that.")
        remote = network_part(_text(path), NETWORK_VSI)
        if remote:
            raise LodestarError(f"{top.name} names the network path {remote!r}; Lodestar reads only local files and "
                                "made no request: download the data into the case folder and use the copy.")
        return
    if len(chain) >= MAX_DEPTH or path.resolve() in chain:
        raise LodestarError(f"{top.name} reads VRTs nested more than {MAX_DEPTH} deep, or in a loop; save it as a "
                            "GeoTIFF (Raster > Conversion > Translate) and use that.")
    text = _text(path)
    remote = network_part(text, NETWORK_VSI)
    if remote:  # anywhere in the VRT: a source, an option, a nested description
        raise LodestarError(f"{top.name} reads the network path {remote!r}; Lodestar reads only local files and made "
                            "no request: download the data into the case folder and point the VRT at the copy.")
    if re.search(r"PixelFunctionLanguage\s*=\s*[\"']?python", text, re.IGNORECASE):
        raise LodestarError(f"{top.name} holds a Python pixel function (code GDAL would run); save the result as a "
                            "GeoTIFF and use that.")
    try:
        tree = ElementTree.fromstring(text)
    except ElementTree.ParseError as exc:
        raise LodestarError(f"{top.name} is not a readable VRT ({exc}); save it again (Raster > Miscellaneous > Build "
                            "Virtual Raster) or export the data as a GeoTIFF.") from exc
    for element in tree.iter():
        if not isinstance(element.tag, str) or element.tag.lower() not in SOURCE_TAGS:
            continue
        source = (element.text or "").strip()
        if not source:
            continue
        check_path_text(source, f"{top.name}: its source")
        relative = {k.lower(): v for k, v in element.attrib.items()}.get("relativetovrt", "0").strip() == "1"
        base = path.parent if relative else Path(os.getcwd())  # as GDAL opens it
        target = (base / source).resolve()  # an absolute source stays itself
        if not target.is_relative_to(root):
            raise LodestarError(f"{top.name} reads {source!r}, which lies outside {root}; a dataset may read only "
                                "files inside the case folder (or its own folder): copy the file there and point "
                                "the VRT at it, or save the VRT as a GeoTIFF (Raster > Conversion > Translate).")
        if target.is_dir():
            raise LodestarError(f"{top.name} reads {source!r}, a folder; point it at a raster or vector file.")
        if target not in found:
            found.append(target)
        if target.is_file():
            _collect(target, root, raster, found, chain + [path.resolve()])


def _xml_root(path: Path) -> str | None:
    """The lower-case tag of the root element when the file is XML text, else None (a binary or other file)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(4096)
    except OSError:
        return None
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    while text.startswith((b"<?", b"<!--", b"<!")):  # declaration, comments, doctype
        end = text.find(b">")
        if end < 0:
            return None
        text = text[end + 1:].lstrip(b" \t\r\n")
    match = re.match(rb"<\s*([A-Za-z_][\w.:-]*)", text)
    return match.group(1).decode("ascii", "replace").split(":")[-1].lower() if match else None


def _text(path: Path) -> str:
    size = path.stat().st_size
    if size > MAX_VRT_BYTES:
        raise LodestarError(f"{path.name} is an XML dataset description of {size / 2 ** 20:.0f} MB (at most "
                            f"{MAX_VRT_BYTES >> 20} MB are read); save it as a GeoTIFF and use that.")
    return path.read_text(encoding="utf-8", errors="replace")
