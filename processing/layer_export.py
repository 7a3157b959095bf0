"""QGIS layers as the core reads them: the file behind a layer (written out when there is none), its words, its
guessed role and its analysis spec. One behaviour for the dock and every algorithm."""
from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

import geopandas as gpd
from pyproj import CRS
from qgis.core import QgsFeatureRequest, QgsProcessingUtils, QgsRasterLayer, QgsVectorLayer
from qgis.PyQt.QtCore import QVariant

from ..plugin.errors import LodestarError
from ..plugin.roles import tagged_role
from ..plugin.vector_io import write_vector

if TYPE_CHECKING:  # annotations only
    from ..plugin.raster_io import LayerSpec


def source_file(layer) -> Path | None:
    """The local file a layer reads ('|layername=' and other options dropped); None when it is not a file."""
    source = layer.source().split("|", 1)[0]
    path = Path(source)
    return path if source and path.is_file() else None


def raster_file(value, context) -> str | None:
    """The path a layer parameter's value gives when it names a raster file, for the core to read without a QGIS
    layer: QGIS computes the statistics of a raster it loads and GDAL keeps them, in a .aux.xml beside the file or
    in a VRT itself (rewriting it), so a raster given by its file is only read, never loaded. Any path GDAL would
    not read locally (a network path, a virtual file system) is given back too, for the core to refuse before
    anything opens it. None for a layer of the project (or one loaded before), a vector file, and no file."""
    from ..plugin.confinement import check_path_text
    from ..plugin.raster_io import VECTOR_SUFFIXES

    if not isinstance(value, str) or not value.strip():
        return None
    if QgsProcessingUtils.mapLayerFromString(value, context, False) is not None:
        return None
    try:
        check_path_text(value, "")
    except LodestarError:
        return value
    path = Path(value)
    return value if path.is_file() and path.suffix.lower() not in VECTOR_SUFFIXES else None


def layer_name(layer) -> str:
    """A layer's name; a raster given by its file (`raster_file`) is named by the file, as QGIS names it."""
    return layer.stem if isinstance(layer, Path) else layer.name()


def layer_path(layer, folder=None) -> str:
    """The file the core reads for a QGIS layer (or a raster given by its file, `raster_file`). A vector layer that
    is not a whole file on its own (one layer of a GeoPackage, a layer with a filter, a memory or database layer)
    is first written, as QGIS shows it, to a GeoPackage in `folder` (default: a temporary folder). Rasters must be
    GDAL files."""
    if isinstance(layer, Path):
        return str(layer)
    if isinstance(layer, QgsVectorLayer):
        if layer.providerType() == "ogr" and "|" not in layer.source() and source_file(layer) is not None:
            return layer.source()
        name = re.sub(r"[^\w-]+", "_", layer.name()).strip("_") or "layer"
        target = Path(folder) / f"{name}.gpkg" if folder is not None else \
            QgsProcessingUtils.generateTempFilename(f"{name}.gpkg")
        return str(write_vector(source_frame(layer), target))
    if layer.providerType() != "gdal":
        raise LodestarError(f"Layer {layer.name()} comes from the {layer.providerType()} provider; save it as a "
                            "GeoTIFF (Export > Save As) and use that file.")
    return layer.source().split("|")[0]


def layer_texts(layer) -> list[str]:
    """Words that tell a layer's role: name, file name, metadata title/abstract/keywords, band names."""
    meta = layer.metadata()
    texts = [layer.name(), meta.title(), meta.abstract()]
    for words in meta.keywords().values():
        texts.extend(words)
    path = source_file(layer)
    if path is not None:
        texts.append(path.stem)
    if isinstance(layer, QgsRasterLayer):
        texts.extend(layer.bandName(i) for i in range(1, layer.bandCount() + 1))
    return texts


def guessed_role(layer) -> str:
    """The role a Lodestar raster carries in its LODESTAR_ROLE tag, else the guess from the layer's words and the
    legend beside its file (`guess_file_role`). A raster given by its file (`raster_file`) has the words QGIS would
    show for it: its file's name and its bands' descriptions."""
    from ..plugin.raster_io import RasterReader  # the raster and request imports wait until a layer is read, so
    from ..plugin.request.request import guess_file_role  # algorithms that read no raster load without rasterio

    path = layer if isinstance(layer, Path) else source_file(layer)
    reader = None
    if isinstance(layer, Path) or (isinstance(layer, QgsRasterLayer) and layer.providerType() == "gdal"
                                   and path is not None):
        try:
            reader = RasterReader(layer_path(layer))
        except LodestarError:  # a raster the core cannot read says so when it is used, not while guessing
            pass
        tagged = tagged_role(reader.tags) if reader is not None else None
        if tagged:
            return tagged
    if isinstance(layer, Path):
        bands = [text for text in (reader.descriptions if reader is not None else ()) if text]
        return guess_file_role(path, path.stem, *bands)
    return guess_file_role(path, *layer_texts(layer))


def layer_spec(layer, role: str, folder=None, favourable: str | None = None) -> LayerSpec:
    """The analysis layer of a QGIS layer or a raster given by its file (see `layer_path` and the core's
    `evidence_spec`)."""
    from ..plugin.request.request import evidence_spec

    return evidence_spec(layer_path(layer, folder), role, layer_name(layer), favourable)


def _plain(value):
    """A QGIS attribute value as a plain Python value (NULL becomes None, dates become datetime objects)."""
    if isinstance(value, QVariant):
        return None if value.isNull() else value.value()
    for convert in ("toPyDateTime", "toPyDate", "toPyTime"):
        if hasattr(value, convert):
            return getattr(value, convert)()
    return value


def source_frame(source) -> gpd.GeoDataFrame:
    """A QGIS feature source or vector layer as a GeoDataFrame (attributes and geometries in its CRS; no fid)."""
    from shapely import wkb

    names = [name for name in source.fields().names() if name != "fid"]
    records, geometries = [], []
    for feature in source.getFeatures(QgsFeatureRequest()):
        records.append({name: _plain(feature[name]) for name in names})
        geometry = feature.geometry()
        geometries.append(None if geometry.isNull() else wkb.loads(bytes(geometry.asWkb())))
    crs = CRS.from_wkt(source.sourceCrs().toWkt()) if source.sourceCrs().isValid() else None
    return gpd.GeoDataFrame(records, columns=names, geometry=gpd.GeoSeries(geometries, crs=crs), crs=crs)
