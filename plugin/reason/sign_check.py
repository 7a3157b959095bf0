"""Before the run, with known deposits and no calibration: the layers of the plan whose favourable side ranks the
deposits below the average cell, so the geologist sees it, and turns the layer the other way or leaves it, before
the surface is made.

The plan is the one the run would make (`knowledge_specs` with the deposit model the run would follow), each layer's
membership made on a coarse grid of the layers (CHECK_PIXELS cells: a second or so) and scored against the deposits
(the success-rate AUC, ties counted half). A layer below 0.5 holds the deposits where its evidence says least. The
deposits shape nothing: the check only says; the run is the geologist's to change. The run says the same after it
(`prospectivity.anti_correlated`), on the analysis grid.
"""
from __future__ import annotations

from ..evaluation import deposit_coordinates, evaluate_surface
from ..favourability.evidence import membership_map
from ..favourability.knowledge import knowledge_specs
from ..labels import the
from ..raster_io import RasterSet
from .workspace import describe_layers

CHECK_PIXELS = 250_000
"""Cells of the coarse grid the check reads the layers on."""


def sides_against_deposits(layers: list, deposits, model: dict, favourable_units: dict | None = None,
                           max_pixels: int = CHECK_PIXELS) -> list[dict]:
    """[{"layer", "side" ('high' / 'low' / 'units'), "auc", "deposits": deposits on the layer's data, "why"}] of the
    plan's layers (LayerSpec `layers`) that rank the `deposits` (a vector or table path) below the average cell,
    for the deposit `model` the run follows."""
    raster_set = RasterSet(list(layers), max_pixels=max_pixels)
    infos = describe_layers(raster_set)
    specs, _ = knowledge_specs(infos, model, favourable_units or {})
    xy = deposit_coordinates(deposits, raster_set.crs, [])
    rows = []
    for spec in specs:
        raster_set.progress.check()
        if spec.weight <= 0:
            continue
        metrics = evaluate_surface(membership_map(raster_set, spec), raster_set.grid, xy, curve=False)
        if not metrics["inside"] or metrics["auc"] is None or metrics["auc"] >= 0.5:
            continue
        side = ("units" if spec.transform == "units" else
                "low" if spec.membership in ("invert", "small") else "high")
        where = ("its favourable units" if side == "units" else f"its {side} values")
        rows.append({"layer": spec.layer, "side": side, "auc": float(metrics["auc"]),
                     "deposits": int(metrics["inside"]),
                     "why": (f"{spec.layer} ranks {the(metrics['inside'], 'known deposit')} below the average cell "
                             f"(AUC {metrics['auc']:.2f}): the plan reads {where} as favourable, and the deposits "
                             "lie elsewhere.")})
    return rows

