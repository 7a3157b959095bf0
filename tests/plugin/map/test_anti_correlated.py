"""The note on a layer the knowledge-driven surface weighs up whose membership ranks the known deposits below the
average cell (prospectivity.anti_correlated).

Grid: 10 x 10 cells of 1 km. Deposits at (2, 9), (5, 8) and (8, 7), and one off the grid (not counted). A layer's
AUC over the cells is 1 - the mean, over the deposits, of the share of cells above the deposit's value plus half the
share tied with it:
- `with`: column / 9, each column 10 tied cells. The deposits lie in columns 9, 8, 7: 0 + 0.05, 0.1 + 0.05,
  0.2 + 0.05, AUC 1 - 0.15 = 0.85.
- `against`: 1 - column / 9. Now 0.9 + 0.05, 0.8 + 0.05, 0.7 + 0.05: AUC 1 - 0.85 = 0.15.
- `reversed index`: 1 - (row-major index) / 99, no ties. The deposits' indices 29, 58, 87 have 29, 58, 87 cells
  above them, and themselves half: 0.295, 0.585, 0.875, AUC 1 - 0.585 = 0.415.
- `flat`: 0.5 everywhere: every deposit ties all 100 cells, 0.5 each, AUC 0.5 exactly.
"""
from __future__ import annotations

import numpy as np
import pytest
from affine import Affine
from pyproj import CRS

from lodestar.plugin.favourability.evidence import EvidenceSpec
from lodestar.plugin.favourability.overlay import Surface
from lodestar.plugin.map.prospectivity import anti_correlated
from lodestar.plugin.raster_io import RasterGrid

GRID = RasterGrid(Affine(1000, 0, 500_000, 0, -1000, 4_010_000), 10, 10, CRS.from_epsg(32633))
CELLS = [(2, 9), (5, 8), (8, 7)]
OFF_GRID = (480_000.0, 4_005_000.0)
COLUMN = np.tile(np.arange(10) / 9.0, (10, 1))


def xy(cells) -> list:
    return [(500_000 + (c + 0.5) * 1000, 4_010_000 - (r + 0.5) * 1000) for r, c in cells]


def membership(values, mask=False) -> np.ma.MaskedArray:
    """A membership map as membership_map makes it: float32 0-1, masked where the layer has no data."""
    return np.ma.masked_array(np.asarray(values, dtype="float32"), mask=np.broadcast_to(mask, (10, 10)))


MAPS = {"with": membership(COLUMN), "against": membership(1.0 - COLUMN),
        "reversed index": membership(1.0 - np.arange(100).reshape(10, 10) / 99.0),
        "flat": membership(np.full((10, 10), 0.5))}


def knowledge(weights: dict, maps: dict = MAPS) -> Surface:
    """The knowledge-driven surface of layers at `weights` (their weighted mean; anti_correlated reads its specs and
    grid only)."""
    specs = [EvidenceSpec(name, "geochemistry", "index", "none", weight=w) for name, w in weights.items()]
    present = [(maps[s.layer], s.weight) for s in specs if s.layer in maps and s.weight > 0]
    values = sum(m * w for m, w in present) / sum(w for _, w in present) if present else membership(np.zeros((10, 10)))
    return Surface(values, GRID, specs=specs)


def note(layer: str, weight: str, deposits: int, auc: str) -> str:
    return (f"{layer} is weighted {weight} by the deposit model, but its membership ranks the {deposits} known "
            f"deposits below the average cell here (AUC {auc}): check it before trusting the knowledge-driven "
            "surface.")


def test_a_layer_weighted_up_that_runs_against_the_deposits_is_flagged_and_one_that_runs_with_them_is_not():
    """`against` (AUC 0.15) weighted 1.5 is flagged, with its weight, the 3 deposits on the grid (the fourth lies off
    it) and its AUC; `with` (AUC 0.85) is not."""
    notes = anti_correlated(knowledge({"with": 1.0, "against": 1.5}), MAPS, xy(CELLS) + [OFF_GRID])
    assert notes == [note("against", "1.5", 3, "0.150")]


def test_a_layer_ranking_the_deposits_just_below_average_is_flagged_with_its_auc():
    """`reversed index` (no tied cells, AUC 0.415) is flagged; `with` is not, whatever its weight."""
    notes = anti_correlated(knowledge({"reversed index": 1.0, "with": 3.0}), MAPS, xy(CELLS))
    assert notes == [note("reversed index", "1", 3, "0.415")]


def test_a_layer_at_chance_is_not_flagged():
    """`flat` ranks every deposit at the average cell (AUC 0.5 exactly): not below it, so not flagged."""
    assert anti_correlated(knowledge({"flat": 1.0}), MAPS, xy(CELLS)) == []


def test_a_layer_the_deposit_model_does_not_weigh_up_is_not_flagged():
    """`against` at weight 0 does not enter the surface: nothing to check; the same layer weighted 2 is flagged."""
    assert anti_correlated(knowledge({"against": 0.0, "with": 1.0}), MAPS, xy(CELLS)) == []
    assert anti_correlated(knowledge({"against": 2.0}), MAPS, xy(CELLS)) == [note("against", "2", 3, "0.150")]


def test_deposits_on_cells_a_layer_lacks_are_not_counted():
    """`against` without column 9: the deposit (2, 9) is off its data. Over the 90 cells left the deposits in
    columns 8 and 7 have 80 and 70 cells above them and 10 tied: (85 + 75) / 2 / 90 = 80/90, AUC 10/90 = 0.111,
    over 2 deposits. Without columns 7-9 no deposit is on its data: no note."""
    lacking = np.zeros((10, 10), bool)
    lacking[:, 9] = True
    maps = dict(MAPS, against=membership(1.0 - COLUMN, lacking))
    assert anti_correlated(knowledge({"against": 1.0}, maps), maps, xy(CELLS)) == [note("against", "1", 2, "0.111")]
    lacking[:, 7:] = True
    maps = dict(MAPS, against=membership(1.0 - COLUMN, lacking))
    assert anti_correlated(knowledge({"against": 1.0}, maps), maps, xy(CELLS)) == []


def test_a_layer_without_a_map_or_without_data_is_passed_over():
    """A spec whose layer has no membership map, or whose map is masked everywhere, gives no note (and no error),
    while `against` beside them is still flagged."""
    maps = dict(MAPS, empty=membership(np.zeros((10, 10)), True))
    notes = anti_correlated(knowledge({"absent": 1.0, "empty": 1.0, "against": 1.0}, maps), maps, xy(CELLS))
    assert notes == [note("against", "1", 3, "0.150")]


@pytest.mark.parametrize("deposits", [[], [OFF_GRID]])
def test_no_deposit_on_the_grid_no_note(deposits):
    """Without a deposit on the layer's cells there is no AUC to judge by."""
    assert anti_correlated(knowledge({"against": 1.0}), MAPS, deposits) == []
