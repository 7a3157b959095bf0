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

from ..raster_io import RasterSet

DENSITY_RADII_M = (2000.0, 5000.0)


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
                out.append(make_layer(f"{layer.name}: distance to a unit contact", _on(distance, valid), "m", "low",
                                      layer.name))
            continue
        if layer.units != "m" or not raster_set.spec(layer.name).is_vector:
            continue
        lines = [g for g in raster_set.features(layer.name).geometry
                 if g is not None and not g.is_empty and "Line" in g.geom_type]
        if not lines:
            continue
        for radius in DENSITY_RADII_M:
            density = line_density_km_per_km2(lines, grid, radius)
            out.append(make_layer(f"{layer.name}: fault density within {radius / 1000:g} km", _on(density, valid),
                                  "km/km2", "high", layer.name))
    return out


def line_density_km_per_km2(lines, grid, radius_m: float) -> np.ndarray:
    """Length of `lines` per km2 in a disc of `radius_m` around each cell: the cells the lines touch, each counted
    as one pixel width of line, summed over the disc (an FFT convolution, so a large radius costs no more)."""
    width, height = (abs(v) for v in grid.pixel_size)
    burnt = rasterize(((g, 1) for g in lines), out_shape=(grid.height, grid.width), transform=grid.transform,
                      fill=0, all_touched=True, dtype="uint8").astype("float32")
    ry, rx = max(1, int(round(radius_m / height))), max(1, int(round(radius_m / width)))
    yy, xx = np.mgrid[-ry:ry + 1, -rx:rx + 1]
    disc = ((yy * height) ** 2 + (xx * width) ** 2 <= radius_m ** 2).astype("float32")
    length_m = signal.fftconvolve(burnt, disc, mode="same") * (width + height) / 2.0
    area_km2 = disc.sum() * width * height / 1e6
    return np.clip(length_m / 1000.0 / area_km2, 0.0, None).astype("float32")


def contact_distance_m(codes: np.ma.MaskedArray, pixel_size) -> np.ndarray | None:
    """Distance in metres from each cell to the nearest contact between two units (cells of different codes side
    by side, both with data); None when the map holds a single unit."""
    values = np.ma.getdata(codes)
    known = ~np.ma.getmaskarray(codes)
    edge = np.zeros(values.shape, dtype=bool)
    across = (values[:, 1:] != values[:, :-1]) & known[:, 1:] & known[:, :-1]
    down = (values[1:, :] != values[:-1, :]) & known[1:, :] & known[:-1, :]
    edge[:, 1:] |= across
    edge[:, :-1] |= across
    edge[1:, :] |= down
    edge[:-1, :] |= down
    if not edge.any():
        return None
    width, height = (abs(v) for v in pixel_size)
    return ndimage.distance_transform_edt(~edge, sampling=(height, width)).astype("float32")


def _on(values: np.ndarray, valid: np.ndarray) -> np.ma.MaskedArray:
    return np.ma.masked_array(np.asarray(values, dtype=float), mask=~valid)
