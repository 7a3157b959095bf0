"""Every number outside the offline reasoner that decides what a run finds, in one frozen object with the reason for
each and where its value came from (`REASONS`); the offline reasoner's own are `models/offline/settings.py`. The
modules that use a number bind it by its old name (`SADDLE_DEPTH = CORE.saddle_depth`), so an experiment changes it
here, and `described` lists them all with their reasons (docs/decisions.md prints them). Numbers that decide nothing
about the ground (memory and time budgets, input limits, picture sizes, file formats) stay where they are used;
tests/test_decisions.py names each of those and why it is no decision."""
from __future__ import annotations

from dataclasses import dataclass, field, fields

PROVENANCES = (
    "deposit-model knowledge",
    "the literature",
    "a statistical convention",
    "a property of the data",
    "a design choice",
    "fitted on the second generator (scripts/worlds_b.py)",
    "chosen on the held-out districts of tests/benchmarks/bench_skill.py",
    "set by hand while developing on the first generator (scripts/synthetic_cases.py)",
    "set by hand while developing on the second generator (scripts/worlds_b.py)",
    "set by hand while developing on the real districts (tests/data)",
    "set by hand while developing on generated scanned maps (tests/scanned_maps.py)",
)
"""The kinds of provenance; each provenance in `REASONS` here and in the offline reasoner's settings starts with one,
its details (a commit, a seed, a source) follow in brackets. "A design choice" is a value set by judgement, not
measured on data."""


@dataclass(frozen=True)
class CoreSettings:
    """The core's decision numbers, by the stage that uses them (reasons and provenance: `REASONS`)."""

    # load: the layers and their common ground
    overlap_warning_share: float = 0.25
    ramp_max_colours: int = 512
    nominal_pixel_m: float = 30.0
    flat_spread: float = 1e-5
    # load: a scanned map read through its legend (tools/)
    min_swatches: int = 3
    swatch_rows: tuple[int, ...] = (6, 150)
    swatch_cols: tuple[int, ...] = (8, 300)
    min_fill: float = 0.8
    swatch_de: float = 14.0
    align_share: float = 0.2
    size_share: float = 0.35
    dark: int = 110
    box_max_share: float = 0.5
    box_min_fill: float = 0.45
    ink_contrast_l: float = 12.0
    ink_size_px: int = 7
    paper_separation_de: float = 8.0
    letter_px: int = 60
    min_letters: int = 4
    tolerance_de: float = 20.0
    swatch_inset_px: int = 2
    # reason: layers, zones and the plan
    classed_max: int = 32
    saturated_share: float = 0.001
    log_range: float = 10.0
    max_plan_steps: int = 12
    speck_m2: float = 50_000.0
    coincidence_reach_m: float = 10_000.0
    localization_ranges: dict[str, tuple[float, float]] = field(default_factory=lambda: {
        "degree_centrality_weight": (1.0, 3.0),
        "betweenness_centrality_weight": (1.0, 3.0),
        "chain_presence_weight": (1.0, 3.0),
        "important_areas_count": (3, 7),
        "hop2_expansion_height": (1.0, 1.5),
        "hop2_expansion_width": (1.0, 1.5),
        "clip_ratio": (0.0, 5.0),
    })
    area_weight_range: tuple[float, ...] = (1.0, 2.0)
    linear_compactness: float = 0.2
    # favourability: the knowledge-driven surface
    item_weight: float = 1.0
    max_weight_ratio: float = 2.0
    other_units: float = 0.1
    fault_distance: dict[str, float] = field(default_factory=lambda: {
        "midpoint": 2000.0,
        "spread": 3.0,
    })
    gamma: float = 0.8
    membership_defaults: dict[str, dict[str, float]] = field(default_factory=lambda: {
        "large": {"spread": 5.0},
        "small": {"spread": 5.0},
        "gaussian": {"spread": 0.1},
    })
    density_radii_m: tuple[float, ...] = (2000.0, 5000.0)
    # favourability: weights of evidence
    unit_area: float = 1_000_000.0
    max_classes: int = 100
    ci_ratio_flag: float = 0.85
    pairwise_level: float = 0.05
    small_expected: float = 5.0
    empty_count: float = 0.5
    min_class_deposits: int = 2
    # favourability: calibration on known deposits
    block_m: float = 10_000.0
    blocks_across: int = 8
    min_block_cells: int = 3
    buffer_m: float = 1000.0
    background_cells: int = 10_000
    inner_folds: int = 2
    reference_cells: int = 20_000
    seed: int = 0
    sign_level: float = 0.05
    reference_scores: int = 10_000
    forest_trees: int = 30
    boosting_rounds: int = 50
    boosting_rate: float = 0.2
    max_one_hot: int = 40
    quantiles: int = 101
    # map: targets
    tiers: tuple[float, ...] = (0.02, 0.05, 0.10)
    saddle_depth: float = 0.02
    share_limit: float = 2.0
    min_target_cells: int = 4
    min_footprint_share: float = 0.25
    work_list: int = 30
    # judge: the targets' own evidence
    support_rank: float = 0.70
    min_coverage: float = 0.5
    verdict_factor: dict[str, float] = field(default_factory=lambda: {
        "strong": 1.0,
        "moderate": 0.8,
        "weak": 0.6,
        "unsupported": 0.4,
        "": 1.0,
    })
    judged: int = 10
    # report: how a surface is scored
    scored_shares: tuple[float, ...] = (0.02, 0.05, 0.10, 0.20)

    def described(self) -> list[dict]:
        """[{"name", "value", "reason", "provenance"}] of every number, in field order, as JSON holds them."""
        return described(self, REASONS)


def described(settings, reasons: dict[str, tuple[str, str]]) -> list[dict]:
    """[{"name", "value", "reason", "provenance"}] of every field of the frozen `settings`, in field order, as JSON
    holds them, with the reason and provenance `reasons` gives each (the core's and the offline reasoner's)."""
    return [{"name": item.name, "value": _plain(getattr(settings, item.name)), "reason": reasons[item.name][0],
             "provenance": reasons[item.name][1]} for item in fields(settings)]


def _plain(value):
    """A value as JSON holds it: tuples as lists, inside mappings too."""
    if isinstance(value, tuple):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    return value


CORE = CoreSettings()
"""The numbers every module binds."""

REASONS: dict[str, tuple[str, str]] = {
    "overlap_warning_share": (
        "When the layers' common extent is under this share of the largest layer, the run says so.",
        'a design choice (2aeb2c4)'),
    "ramp_max_colours": (
        'An 8-bit RGB image with more colours (5 bits a channel) than this is a composite, not an index rendered '
        "through a colour ramp (the sample's rendered ferric index holds 159).",
        "a design choice (the sample's rendered index holds 159 colours; 9f03632)"),
    "nominal_pixel_m": (
        "Ground size of a pixel when no layer is georeferenced (MineBench-style images): ASTER's VNIR/SWIR scale.",
        "a property of the data (ASTER's SWIR pixel; 81d3e5e)"),
    "flat_spread": (
        'A layer of values whose spread (half their range) is under this share of their size (the largest absolute '
        'value) is flat: it cannot rank places, so it tests no item (`silence`). float32 resolves a value to 2**-24 '
        '(6e-8) of its size; a spread within about a hundred of those steps is what rounding leaves on a constant '
        'carried through resampling and index arithmetic, and is finer than the anomalies any survey reports relative'
        ' to its values (spectral indices and assays: 1e-3 and more; a total magnetic field: tens of nT in 50,000).',
        'a statistical convention (the storage precision of the values read, float32; issue 60, scenario 4: 0.5 +/- '
        '1e-6; b6f9d3e)'),
    "min_swatches": (
        'A legend has at least this many swatches of one size.',
        'set by hand while developing on generated scanned maps (tests/scanned_maps.py) (81e7f8f)'),
    "swatch_rows": (
        'Height (pixels) a swatch interior may have.',
        'set by hand while developing on generated scanned maps (tests/scanned_maps.py) (81e7f8f)'),
    "swatch_cols": (
        'Width (pixels) a swatch interior may have.',
        'set by hand while developing on generated scanned maps (tests/scanned_maps.py) (81e7f8f)'),
    "min_fill": (
        'A swatch (its holes filled) fills at least this share of its bounding rectangle.',
        'set by hand while developing on generated scanned maps (tests/scanned_maps.py) (81e7f8f)'),
    "swatch_de": (
        'Pixels of a swatch lie within this colour difference (Delta E, after a 3 x 3 median) of its median colour.',
        'set by hand while developing on generated scanned maps (tests/scanned_maps.py) (81e7f8f)'),
    "align_share": (
        'Swatches of one column start within this share of their width of each other (3 pixels at least).',
        'set by hand while developing on generated scanned maps (tests/scanned_maps.py) (81e7f8f)'),
    "size_share": (
        'Swatches of one legend differ in width and height by at most this share (2 pixels at least).',
        'set by hand while developing on generated scanned maps (tests/scanned_maps.py) (81e7f8f)'),
    "dark": (
        'Grey level (0-255) below which a pixel is lettering.',
        'set by hand while developing on generated scanned maps (tests/scanned_maps.py) (81e7f8f)'),
    "box_max_share": (
        'A background patch whose bounding box covers more than this share of the image is open paper, not a legend '
        'box.',
        'set by hand while developing on generated scanned maps (tests/scanned_maps.py) (81e7f8f)'),
    "box_min_fill": (
        'A background patch that fills less than this share of its bounding box (paper around a map) is open paper, '
        'not a legend box.',
        'set by hand while developing on generated scanned maps (tests/scanned_maps.py) (81e7f8f)'),
    "ink_contrast_l": (
        'A pixel this much darker (CIELAB L*) than the lightest of its 7 x 7 neighbourhood, closed, is ink.',
        'set by hand while developing on generated scanned maps (tests/scanned_maps.py) (81e7f8f)'),
    "ink_size_px": (
        'Strokes narrower than this (in pixels) are ink; a unit is wider.',
        'set by hand while developing on generated scanned maps (tests/scanned_maps.py) (81e7f8f)'),
    "paper_separation_de": (
        "The paper is no unit colour when a unit's swatch lies this close (Delta E) to the legend's background.",
        'set by hand while developing on generated scanned maps (tests/scanned_maps.py) (81e7f8f)'),
    "letter_px": (
        "Height (pixels) a label's strip is enlarged to, about the cap height Tesseract reads best.",
        'set by hand while developing on generated scanned maps (tests/scanned_maps.py) (81e7f8f)'),
    "min_letters": (
        'Shorter words are never corrected: too many short words lie one letter apart.',
        'set by hand while developing on generated scanned maps (tests/scanned_maps.py) (81e7f8f)'),
    "tolerance_de": (
        'A pixel farther than this (CIELAB Delta E) from every swatch colour is no unit (nodata).',
        'set by hand while developing on generated scanned maps (tests/scanned_maps.py) (81e7f8f)'),
    "swatch_inset_px": (
        "A swatch's colour is the median of its interior less this margin (its outline, blurred by the scan).",
        'set by hand while developing on generated scanned maps (tests/scanned_maps.py) (81e7f8f)'),
    "classed_max": (
        'At most this many distinct integer values (or integer limits this many apart) make a layer "classed": '
        'ordered classes, not measurements.',
        'a design choice (81d3e5e)'),
    "saturated_share": (
        'At least this share of cells exactly at the favourable end marks a clipped display stretch (a greyscale '
        'rendering): values stop there, so no departure beyond it can be seen ("ceiling", in measure units).',
        'set by hand while developing on the second generator (scripts/worlds_b.py) (seed 777; cd5691e)'),
    "log_range": (
        "A lognormal layer's 98th percentile is at least this many times its 2nd.",
        'a statistical convention (an order of magnitude between the 2nd and 98th percentiles, as assays spread; '
        '81d3e5e)'),
    "max_plan_steps": (
        'The longest plan the loop runs (longer plans are cut).',
        'a design choice (9b63fb9)'),
    "speck_m2": (
        "On a georeferenced grid a region under 0.05 km2 (about 225 m across) is a speck, whatever the map's extent.",
        'set by hand while developing on the first generator (scripts/synthetic_cases.py) (1433af2)'),
    "coincidence_reach_m": (
        "How far (metres on the ground) a new zone's neighbours of other layers are looked for; in pixel space (no "
        "georeferencing) a quarter of the image's diagonal.",
        'a design choice (81d3e5e)'),
    "localization_ranges": (
        'The range each localization parameter a planner chooses may take; a value outside it is brought inside.',
        "the literature (STA-CoT, Appendix C.4, gives each of these ranges but clip_ratio's, which was set by hand "
        'while developing on the first generator; 0187f7c)'),
    "area_weight_range": (
        "The range an area type's weight a planner chooses may take.",
        "the literature (STA-CoT, Appendix C.4: an area type's weight from 1.0 to 2.0; 0187f7c)"),
    "linear_compactness": (
        'Polsby-Popper compactness (4 pi area / perimeter^2) below which a zone counts as linear: a fault corridor or'
        ' contact strip (a 10:1 rectangle scores 0.26, a 30:1 strip 0.1; a disc 1.0).',
        'a design choice (4422882)'),
    "item_weight": (
        "The weight of a layer whose role the model's evidence items name.",
        'a design choice (every named layer weighs the same; ded9952)'),
    "max_weight_ratio": (
        "The widest ratio between two layers' weights a model may give: without deposits no weight is known better "
        'than within a factor of two, and a mean of ranks with weights that far apart stays close to the equal-weight'
        ' one.',
        'a design choice (ded9952)'),
    "other_units": (
        'Membership of units that are not favourable: maps are approximate and deposits sit at contacts, so other '
        'units lower favourability without zeroing it (a fuzzy gamma product would otherwise be 0 there).',
        'deposit-model knowledge (a765d26)'),
    "fault_distance": (
        'Membership of the distance to a fault when the deposit model gives none: halfway at 2 km, falling over a few'
        " km (a large membership's midpoint and spread).",
        'deposit-model knowledge (orogenic gold within a few km of a fault; a765d26)'),
    "gamma": (
        'The fuzzy gamma of a plan that names none: between the algebraic product (0) and sum (1), leaning to the sum'
        ' so that one weak layer does not veto a place.',
        'a design choice (368b229)'),
    "membership_defaults": (
        'The parameters a membership starts from when a geologist picks it in the plan editor (a midpoint of 1.0 '
        'beside them): large and small memberships rise over a spread of 5, a gaussian one is 0.1 wide.',
        'a design choice (368b229)'),
    "density_radii_m": (
        "Radii (metres) at which fault density is derived for the fitted models: a deposit's fault network and a "
        "camp's.",
        'set by hand while developing on the real districts (tests/data) (Murchison; cc23488)'),
    "unit_area": (
        'Default unit cell: 1 km2 in square metres.',
        "the literature (Bonham-Carter 1994: a unit cell of about a deposit's size; ee54899)"),
    "max_classes": (
        'A continuous map with more distinct values is cut at this many quantiles before generalisation.',
        'a design choice (ee54899)'),
    "ci_ratio_flag": (
        'Conditional independence is doubtful below this ratio of observed to predicted deposits.',
        'the literature (Bonham-Carter 1994: a ratio under 0.85 suggests a problem; ee54899)'),
    "pairwise_level": (
        "The family-wise level of the pairwise test (the 95 % of Bonham-Carter's tables), held over all pairs by "
        "Holm's step-down.",
        'a statistical convention (the 5 % level; b7e2d3f)'),
    "small_expected": (
        "Below this expected count in a cell of the pair's table the chi-square approximation is rough.",
        "a statistical convention (Cochran's rule of five; b7e2d3f)"),
    "empty_count": (
        "An empty count of a weight's table (no deposit in a class, say) is taken as half a count, so a weight and "
        'its variance stay finite.',
        'a statistical convention (half a count, the usual continuity correction; ee54899)'),
    "min_class_deposits": (
        "A class of a categorical map holding fewer training deposits than this joins the class 'other': one deposit "
        'cannot give a weight whose standard deviation is smaller than the weight itself (s(W+) >= 1).',
        'a statistical convention (s(W+) >= 1 for one deposit; d7a0467)'),
    "block_m": (
        'Spatial cross-validation blocks are squares this many metres on a side, or smaller on a small extent '
        '(blocks_across).',
        'a design choice (8e0b882)'),
    "blocks_across": (
        'An extent is cut into at least this many blocks along its shorter side, so five folds each get several.',
        'a design choice (8e0b882)'),
    "min_block_cells": (
        "A block is at least this many analysis cells across: then it holds cells that touch no other block's, so a "
        'fold is not scored on cells beside its training cells. Blocks of a cell or less are a random split of the '
        'cells, whose skill says nothing of new ground (blocks under the cell size once gave an out-of-fold AUC of '
        '0.987).',
        'a design choice (d423ca7)'),
    "buffer_m": (
        'Background is drawn farther than this from a known deposit: ground that near may hold the same system, '
        'unsampled (on a grid without a CRS, 2 pixels).',
        'deposit-model knowledge (d7a0467)'),
    "background_cells": (
        "Background cells of an outer fit (drawn stratified by fold, calibration.py's docstring): enough for a stable"
        " AUC, few enough for a 3-million-cell district. Chosen on bench_skill's 12 held-out districts (issue 62): "
        '"best" out of fold averaged AUC 0.8719 with 10,000 against 0.8743 with 20,000 (district by district -0.030 '
        "to +0.018, the spread of the sample's own draw) in 22 % less time; Murchison gave 0.9404 with both "
        "(bench_calibration's background table).",
        'chosen on the held-out districts of tests/benchmarks/bench_skill.py (issue 62; 1571205)'),
    "inner_folds": (
        'Hyperparameters are chosen by 2-fold cross-validation over the training folds (alternate folds grouped): '
        'each candidate fitted on half of them and scored on the other half, in turn.',
        'a design choice (89310ae)'),
    "reference_cells": (
        "Cells an ensemble member's scores are ranked against (a random sample of the rows it may see).",
        'a design choice (cc23488)'),
    "seed": (
        "The seed of every random draw of a calibration (background cells, folds' samples, forests).",
        'a statistical convention (a fixed seed: a run is repeatable; d7a0467)'),
    "sign_level": (
        'A single model replaces the ensemble in "best" only when it beats it in so many folds that a one-sided sign '
        "test gives a probability of chance at most this (the 5 % level of the offline reasoner's measurements). The "
        'level is nominal: the model tested is the best of four on the same folds (a chance win is likelier than the '
        'level says, up to about four times) and a tied fold counts as lost (rarer).',
        'a statistical convention (the 5 % level; b0508e0)'),
    "reference_scores": (
        'Scores of the study area each ensemble member keeps (evenly spaced in order) to rank a new score against.',
        'a design choice (cc23488)'),
    "forest_trees": (
        'Trees of a random forest (see boosting_rate).',
        'set by hand while developing on the real districts (tests/data) (Murchison, issue 62; a95e8d8)'),
    "boosting_rounds": (
        'Rounds of gradient boosting (see boosting_rate).',
        'set by hand while developing on the real districts (tests/data) (Murchison, issue 62; a95e8d8)'),
    "boosting_rate": (
        'A forest of 30 trees and 50 boosting rounds at 0.2 (60 trees and 100 rounds at 0.1 until issue 62): half the'
        " fits' and predictions' cost, the same out-of-fold AUC on Murchison (ensemble 0.9404 against 0.9405; "
        'docs/results.md).',
        'set by hand while developing on the real districts (tests/data) (Murchison, issue 62; a95e8d8)'),
    "max_one_hot": (
        "Units one-hot encoded at most; the others share the column 'other'.",
        'a design choice (d7a0467)'),
    "quantiles": (
        "Quantiles of an ordered layer's training values kept (0 %, 1 %, ... 100 %).",
        'a statistical convention (percentiles; 6c7e6eb)'),
    "tiers": (
        'Nested area shares a target can reach: its tier is the smallest share whose top cells it holds; the work list'
        ' is drawn from them tightest first.',
        'a design choice (c098b6e)'),
    "saddle_depth": (
        "A saddle splits two peaks when the lower peak stands this far above it on the surface's percentile-rank "
        'scale (two percentile points: a fifth of the range of the default 10 % selection).',
        'a design choice (c098b6e)'),
    "share_limit": (
        "A verified core spanning more than this many times the targets' area share is not forced into the targets: a"
        ' system filling much of a small scene still is, but not a district-wide outline that would swamp the '
        'selection.',
        'set by hand while developing on the second generator (scripts/worlds_b.py) (seed 777; 310f7b6)'),
    "min_target_cells": (
        'No target is smaller than this many analysis cells (a patch of fewer is a speck of the grid, not a place).',
        'a design choice (81d3e5e)'),
    "min_footprint_share": (
        "The smallest target is this share of one deposit's footprint: half its diameter (the footprints are circles "
        "of the middle of each model's range of sizes, and the low end of a range is about half its middle: 1-3 km "
        'across for an orogenic deposit, 0.5-1.5 km for a magmatic sulphide lens).',
        'deposit-model knowledge (e1ca7b2)'),
    "work_list": (
        'Targets drawn unless set: what a team can follow up in a field season; the rest of the top share stays in '
        'the favourability surface.',
        'a design choice (issue 58 asks for a few dozen; e1ca7b2)'),
    "support_rank": (
        "A layer stands out in a target when the target's cells rank on average in the layer's top 30 % of the "
        'analysed area (the mean rank of a random patch is 0.5).',
        'a design choice (c098b6e)'),
    "min_coverage": (
        'A layer with data over less than this share of a target cannot test it.',
        'a design choice (c098b6e)'),
    "verdict_factor": (
        "How a verdict weighs a judged target's score when the judged ones are reordered among themselves.",
        'a design choice (c098b6e)'),
    "judged": (
        'How many of the best targets the chain judges on their own evidence; they come from the smallest tier of the '
        'top share that holds them.',
        "a design choice (as many as the report's summary lists; c098b6e)"),
    "scored_shares": (
        "The shares of the analysed area at which a surface's capture of known deposits is scored and drawn: its top "
        "2, 5, 10 and 20 %, from a few targets to a district's first pass.",
        'a design choice (b352ee6)'),
}
"""Number name -> (why the core uses it, where its value came from: one of PROVENANCES, then details)."""
