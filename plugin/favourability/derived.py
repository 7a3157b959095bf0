"""Evidence derived from the measured layers, for the models fitted on known deposits: the structural and
contact measures practitioners add for hydrothermal deposits beside the distance to a fault.

- **Fault density**: the length of a line layer's features per km2 within a disc around each cell, at a camp
  scale (2 km) and a district scale (5 km): where faults crowd, bend and branch, fluids had more pathways.
- **Distance to a unit contact**: from each cell to the nearest boundary between two units of a categorical map,
  in metres: contacts are competency and chemical contrasts that trap fluids.

The radii are the two scales of the literature's structural targeting (Groves et al. 1998 for orogenic gold:
deposits cluster within a few km of second-order structures; camps span 5-10 km), fixed and not fitted to any
district. Nothing here sees a deposit: the models decide inside their training folds whether a derived layer
helps, and its out-of-fold importance says so. Distances need a projected grid (metres); on any other grid
nothing is derived.
"""
from __future__ import annotations

import numpy as np
from rasterio.features import rasterize
from scipy import ndimage, signal

from ..decisions import CORE
from ..raster_io import RasterSet

# decision numbers: their reasons and provenance are in plugin/decisions.py
DENSITY_RADII_M = CORE.density_radii_m


def derived_evidence(raster_set: RasterSet, layers: list, make_layer) -> list:
    """Derived layers (made by `make_layer(name, values, units, favourable, source)`) of the measured `layers`:
    fault density for each line layer measured as a distance, the distance to unit contacts for each
    categorical map. Masked outside the analysed area, like the layers they come from."""
    grid = raster_set.grid
    if grid.crs is None or not grid.crs.is_projected:
        return []
    valid = raster_set.valid_mask()
    out = []
    for layer in layers:
        if layer.categorical:
            distance = contact_distance_m(layer.values, grid.pixel_size)
            if distance is not None:
                out.append(make_layer(contact_name(layer.name), _on(distance, valid), "m", "low", layer.name))
            continue
        if layer.units != "m" or not raster_set.spec(layer.name).is_vector:
            continue
        lines = lines_of(raster_set, layer.name)
        if not lines:
            continue
        for radius in DENSITY_RADII_M:
            density = line_density_km_per_km2(lines, grid, radius)
            out.append(make_layer(density_name(layer.name, radius), _on(density, valid), "km/km2", "high",
                                  layer.name))
    return out


def contact_name(source: str) -> str:
    return f"{source}: distance to a unit contact"


def density_name(source: str, radius_m: float) -> str:
    return f"{source}: fault density within {radius_m / 1000:g} km"


def derivation(name: str, source: str) -> tuple[str, float] | None:
    """How the layer called `name` is derived from `source`: ("contact", 0) or ("density", radius in m); None when
    no rule of this module makes that name."""
    if name == contact_name(source):
        return "contact", 0.0
    return next((("density", r) for r in DENSITY_RADII_M if name == density_name(source, r)), None)


def lines_of(raster_set: RasterSet, name: str) -> list:
    """The line features of a vector layer (the ones a fault density counts)."""
    return [g for g in raster_set.features(name).geometry if g is not None and not g.is_empty and "Line" in g.geom_type]


def line_density_km_per_km2(lines, grid, radius_m: float) -> np.ndarray:
    """Length of `lines` per km2 in a disc of `radius_m` around each cell: the cells the lines touch, each counted
    as one pixel width of line, summed over the disc (`density_of`)."""
    burnt = rasterize(((g, 1) for g in lines), out_shape=(grid.height, grid.width), transform=grid.transform,
                      fill=0, all_touched=True, dtype="uint8")
    return density_of(burnt, grid.pixel_size, radius_m)


def density_disc(pixel_size, radius_m: float) -> np.ndarray:
    """The disc of `radius_m` in cells (1 inside, float64), odd on both sides: its centre is the cell itself."""
    width, height = (abs(v) for v in pixel_size)
    ry, rx = max(1, int(round(radius_m / height))), max(1, int(round(radius_m / width)))
    yy, xx = np.mgrid[-ry:ry + 1, -rx:rx + 1]
    return ((yy * height) ** 2 + (xx * width) ** 2 <= radius_m ** 2).astype("float64")


def density_of(burnt: np.ndarray, pixel_size, radius_m: float) -> np.ndarray:
    """The fault density of the cells lines touch (`burnt`, 1 where touched): the touched cells in each cell's disc
    (an FFT convolution, so a large radius costs no more; the count is a whole number, and the FFT's sums are
    rounded to it, so that a window of the grid grown by the radius gives the whole grid's values exactly), times a
    pixel width of line, per km2 of the disc."""
    width, height = (abs(v) for v in pixel_size)
    disc = density_disc(pixel_size, radius_m)
    counts = np.rint(signal.fftconvolve(np.asarray(burnt, dtype="float64"), disc, mode="same"))
    length_m = counts * (width + height) / 2.0
    area_km2 = disc.sum() * width * height / 1e6
    return np.clip(length_m / 1000.0 / area_km2, 0.0, None).astype("float32")


def contact_edges(values: np.ndarray, known: np.ndarray) -> np.ndarray:
    """Cells on a contact: a cell of known unit beside one of another known unit (4-neighbours)."""
    edge = np.zeros(values.shape, dtype=bool)
    across = (values[:, 1:] != values[:, :-1]) & known[:, 1:] & known[:, :-1]
    down = (values[1:, :] != values[:-1, :]) & known[1:, :] & known[:-1, :]
    edge[:, 1:] |= across
    edge[:, :-1] |= across
    edge[1:, :] |= down
    edge[:-1, :] |= down
    return edge


def contact_distance_m(codes: np.ma.MaskedArray, pixel_size) -> np.ndarray | None:
    """Distance in metres from each cell to the nearest contact between two units (cells of different codes side
    by side, both with data); None when the map holds a single unit."""
    edge = contact_edges(np.ma.getdata(codes), ~np.ma.getmaskarray(codes))
    if not edge.any():
        return None
    width, height = (abs(v) for v in pixel_size)
    return ndimage.distance_transform_edt(~edge, sampling=(height, width)).astype("float32")


def _on(values: np.ndarray, valid: np.ndarray) -> np.ma.MaskedArray:
    return np.ma.masked_array(np.asarray(values, dtype=float), mask=~valid)
