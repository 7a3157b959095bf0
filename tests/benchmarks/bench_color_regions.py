"""Benchmark: lodestar color_regions on a 10,000 x 10,000 float32 index raster, against the same job done
as a chain of QGIS/GDAL algorithms (threshold with the raster calculator, sieve to the minimum area,
polygonize), measured in the same run.

Each job runs in its own process; wall time and peak memory (max RSS of the process tree) are printed.
The chain runs twice: through `qgis_process` (what a QGIS user chains in a model) and as the same
GDAL algorithms called in one Python process (no start-up cost). Run: `make bench` or
`.venv/bin/python tests/benchmarks/run_all.py color_regions`.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
BENCH_DIR = ROOT / "build" / "bench"
RASTER = BENCH_DIR / "index_10000.tif"
SIZE = 10_000
PIXEL = 10.0
ORIGIN = (400_000.0, 4_500_000.0)
PERCENTILE = 99.0
MIN_AREA_PX = 10_000
"""Minimum region area in pixels (1 km2 at 10 m): the same for ours and the chain."""

# (row, col, radius in pixels, amplitude): the synthetic anomalies.
ANOMALIES = ((1500, 2000, 300, 3.0), (6000, 7500, 450, 2.5), (8200, 1800, 250, 3.5), (3000, 8200, 350, 2.8))


def make_raster(path: Path = RASTER) -> Path:
    """Write the deterministic benchmark raster once (smooth background, four anomalies, noise, a nodata corner)."""
    if path.exists():
        return path
    import rasterio
    from rasterio.transform import from_origin
    from scipy import ndimage

    path.parent.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(20240601)
    coarse = ndimage.gaussian_filter(rng.normal(size=(101, 101)), 2).astype("float32")
    tmp = path.with_suffix(".tmp.tif")
    profile = {"driver": "GTiff", "width": SIZE, "height": SIZE, "count": 1, "dtype": "float32",
               "crs": "EPSG:32611", "transform": from_origin(ORIGIN[0], ORIGIN[1], PIXEL, PIXEL),
               "nodata": -9999.0, "tiled": True, "blockxsize": 512, "blockysize": 512}
    step = 1000
    cols = np.arange(SIZE, dtype="float32")
    with rasterio.open(tmp, "w", **profile) as dst:
        for r0 in range(0, SIZE, step):
            rows = np.arange(r0, r0 + step, dtype="float32")
            grid_r, grid_c = np.meshgrid(rows / 100.0, cols / 100.0, indexing="ij")
            block = ndimage.map_coordinates(coarse, [grid_r, grid_c], order=1).astype("float32") * 0.5
            rr, cc = np.meshgrid(rows, cols, indexing="ij")
            for row, col, radius, amplitude in ANOMALIES:
                block += amplitude * np.exp(-((rr - row) ** 2 + (cc - col) ** 2) / (2 * radius ** 2 / 4))
            block += rng.normal(scale=0.3, size=block.shape).astype("float32")
            if r0 == 0:
                block[:step, :step] = -9999.0
            dst.write(block, 1, window=rasterio.windows.Window(0, r0, SIZE, step))
    tmp.replace(path)
    return path


def _measured(command: list[str], env: dict | None = None) -> tuple[float, float, str]:
    """(wall seconds, peak RSS MB of the process tree, stdout) of a command, via GNU time."""
    with tempfile.NamedTemporaryFile(suffix=".txt", delete=False) as handle:
        report = Path(handle.name)
    start = time.perf_counter()
    done = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", str(report)] + command, capture_output=True,
                          text=True, env=env)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{command[0]} failed: {done.stderr[-2000:]}")
    peak_kb = float(report.read_text().strip().splitlines()[-1])
    report.unlink()
    return wall, peak_kb / 1024.0, done.stdout


OURS = """
import json, sys, time
sys.path.insert(0, {pkg!r})
from lodestar.plugin.tools.color_regions import ColorRegionParams, color_regions, single_layer_set
start = time.perf_counter()
rs = single_layer_set({raster!r}, role="hydrothermal_alteration")
params = ColorRegionParams(percentile={pct}, min_area_px={min_px}, min_area_fraction=0)
result = color_regions(rs, rs.layers[0].name, params)
print(json.dumps({{"seconds": time.perf_counter() - start, "regions": result.count,
                  "threshold": result.stats["threshold"], "area": float(result.zones.area.sum())}}))
"""

GDAL_CHAIN = """
import json, sys, time
from osgeo import gdal, ogr, osr
import numpy as np
gdal.UseExceptions()
raster, threshold, min_px, out = {raster!r}, {threshold!r}, {min_px}, {out!r}
start = time.perf_counter()
src = gdal.Open(raster)
band = src.GetRasterBand(1)
drv = gdal.GetDriverByName("GTiff")
mask_path = out + "_mask.tif"
dst = drv.Create(mask_path, src.RasterXSize, src.RasterYSize, 1, gdal.GDT_Byte, ["TILED=YES"])
dst.SetGeoTransform(src.GetGeoTransform()); dst.SetProjection(src.GetProjection())
nodata = band.GetNoDataValue()
for r0 in range(0, src.RasterYSize, 1000):
    rows = min(1000, src.RasterYSize - r0)
    a = band.ReadAsArray(0, r0, src.RasterXSize, rows)
    dst.GetRasterBand(1).WriteArray(((a >= threshold) & (a != nodata)).astype(np.uint8), 0, r0)
gdal.SieveFilter(dst.GetRasterBand(1), None, dst.GetRasterBand(1), min_px, 4)
ds = ogr.GetDriverByName("GPKG").CreateDataSource(out + ".gpkg")
srs = osr.SpatialReference(wkt=src.GetProjection())
layer = ds.CreateLayer("zones", srs, ogr.wkbPolygon)
layer.CreateField(ogr.FieldDefn("value", ogr.OFTInteger))
band_mask = dst.GetRasterBand(1)
gdal.Polygonize(band_mask, band_mask, layer, 0, [])
count = layer.GetFeatureCount()
seconds = time.perf_counter() - start
layer.ResetReading()
big = sum(1 for f in layer if f.GetGeometryRef().GetArea() >= min_px * abs(src.GetGeoTransform()[1]) ** 2)
ds = None; dst = None
print(json.dumps({{"seconds": seconds, "regions": count, "large": big}}))
"""


def _qgis_chain(raster: Path, threshold: float, work: Path) -> tuple[float, float, int, int]:
    """The chain as QGIS Processing algorithms through qgis_process (raster calculator, sieve, polygonize)."""
    env = dict(os.environ, LODESTAR_QGIS_HOME=str(work / "qgis"))
    script = str(ROOT / "scripts" / "qgis_process.sh")
    steps = [
        ["run", "gdal:rastercalculator", "--", f"INPUT_A={raster}", "BAND_A=1",
         f"FORMULA=(A>={threshold!r})*(A!=-9999)", "RTYPE=0", f"OUTPUT={work / 'mask.tif'}"],
        ["run", "gdal:sieve", "--", f"INPUT={work / 'mask.tif'}", f"THRESHOLD={MIN_AREA_PX}",
         "EIGHT_CONNECTEDNESS=false", f"OUTPUT={work / 'sieved.tif'}"],
        ["run", "gdal:polygonize", "--", f"INPUT={work / 'sieved.tif'}", "BAND=1", "FIELD=DN",
         f"OUTPUT={work / 'zones.gpkg'}"],
    ]
    wall, peak = 0.0, 0.0
    for step in steps:
        seconds, rss, _ = _measured(["bash", script] + step, env=env)
        wall, peak = wall + seconds, max(peak, rss)
    import geopandas as gpd

    zones = gpd.read_file(work / "zones.gpkg")
    zones = zones[zones["DN"] == 1]
    return wall, peak, len(zones), int((zones.area >= MIN_AREA_PX * PIXEL * PIXEL).sum())


def main() -> None:
    start = time.perf_counter()
    raster = make_raster()
    print(f"raster: {raster} ({SIZE} x {SIZE} float32, ready in {time.perf_counter() - start:.1f} s)")
    python = sys.executable
    pkg = str(ROOT / "build" / "testpkg")
    ours_code = OURS.format(pkg=pkg, raster=str(raster), pct=PERCENTILE, min_px=MIN_AREA_PX)
    wall, peak, out = _measured([python, "-c", ours_code])
    ours = json.loads(out.strip().splitlines()[-1])
    print(f"lodestar color_regions : {wall:6.2f} s wall ({ours['seconds']:.2f} s in the tool), "
          f"peak {peak:7.0f} MB, {ours['regions']} regions, threshold {ours['threshold']:.4f}")
    with tempfile.TemporaryDirectory(dir=BENCH_DIR) as tmp:
        work = Path(tmp)
        gdal_code = GDAL_CHAIN.format(raster=str(raster), threshold=ours["threshold"], min_px=MIN_AREA_PX,
                                      out=str(work / "gdal"))
        g_wall, g_peak, g_out = _measured([python, "-c", gdal_code])
        gdal_result = json.loads(g_out.strip().splitlines()[-1])
        print(f"GDAL chain in-process  : {g_wall:6.2f} s wall, peak {g_peak:7.0f} MB, "
              f"{gdal_result['regions']} polygons, {gdal_result['large']} of them >= the minimum area "
              "(threshold, sieve, polygonize)")
        q_wall, q_peak, q_regions, q_large = _qgis_chain(raster, ours["threshold"], work)
        print(f"QGIS Processing chain  : {q_wall:6.2f} s wall, peak {q_peak:7.0f} MB, {q_regions} polygons, "
              f"{q_large} of them >= the minimum area (gdal:rastercalculator, gdal:sieve, gdal:polygonize "
              "via qgis_process)")
    print(f"speed-up vs QGIS Processing chain: {q_wall / wall:.1f}x; vs in-process GDAL chain: {g_wall / wall:.1f}x "
          f"(target >= 3x, <= 10 s, <= 1.5 GB)")


if __name__ == "__main__":
    main()
