"""What the offline reasoner reads from a deposit model and the layers' roles: alteration families, the items
a candidate core may stand for, and the map units a legend names."""
from __future__ import annotations

from ...plugin.reason.workspace import NOMINAL_PIXEL_M
from ...plugin.tools.lithology_words import matched_units

VECTOR_ROLES = ("structure", "geological_map")
"""Roles a vector layer is evidence in: fault lines and unit polygons (the surface reads no other)."""
FAMILY = {
    "hydrothermal_alteration": "clay",
    "argillic_alteration": "clay",
    "silicification": "silica",
    "propylitic_alteration": "propylitic",
    "iron_oxide": "iron",
    "false_color_composite": "iron",
    "structure": "structure",
    "geological_map": "geology",
    "geochemistry": "geochemistry",
    "geophysics": "geophysics",
    "other": "other",
}
"""Alteration family of each role: coincidence counts only between different families (composites: `seen_again`)."""
COMPOSITE_SHOWS = {"false_color_composite": ("clay", "iron")}
"""Families a composite's colours show: a SWIR-NIR-red picture is made of the bands the AlOH (clay) and
ferric-iron indices are computed from, so its zone over a clay or iron anomaly is that anomaly seen again."""

ZONE_KINDS_STRUCTURE = ("fault", "lineament_density", "contact")
"""Zone kinds that are structures whatever their layer's role: evidence of a structure item."""


def families_of(role: str) -> set:
    """The alteration families a role's zones show (a composite shows those of its bands)."""
    return set(COMPOSITE_SHOWS.get(role, (FAMILY.get(role, "other"),)))


def seen_again(role: str, core_role: str) -> bool:
    """Whether an anomaly of `role` at a core of `core_role` may be the core's own signal seen again, not a
    second kind of evidence: the same alteration family, or a composite showing the core's family."""
    return bool(families_of(role) & families_of(core_role))


def per_metre(ws) -> float:
    """Map units per metre on the ground (analysis grids are projected in metres; pixel space: 1 / 30 m)."""
    return 1.0 if ws.raster_set.grid.crs is not None else 1.0 / NOMINAL_PIXEL_M


def centre_words(model: dict) -> str:
    """What the deposit model's evidence gathers around, in its own words: its first critical item ('shear
    corridor' for orogenic gold, 'phyllic core' for a porphyry), 'main evidence' for a model without one."""
    seeds = seed_items(model)
    return seeds[0]["id"].replace("_", " ") if seeds else "main evidence"


def seeds_are_areas(model: dict) -> bool:
    """Whether the deposit model's cores are areas (an alteration or geochemical anomaly), not lines or units."""
    core = next((i for i in model.get("evidence", []) if i["level"] == "critical"), None)
    return core is not None and core["kind"] == "anomaly" and not set(core["roles"]) & {"structure", "geological_map"}


def seed_items(model: dict) -> list[dict]:
    """The items a candidate core may stand for: the first critical item and, when that is an alteration or
    geochemical anomaly (an area), its critical coincidence partner, less the partner's roles that form a halo
    item around the core, composites and soil surveys."""
    evidence = model.get("evidence", [])
    core = next((i for i in evidence if i["level"] == "critical"), None)
    if core is None:
        return []
    if not seeds_are_areas(model):
        return [core]  # a line or a map unit is no place to measure around: only the first item seeds
    # a halo's roles ring the core, a false-colour composite is a picture, not one mineral's measure, and a soil
    # anomaly spreads downslope and through cover: it confirms a place found otherwise, it does not fix one
    left_out = ({role for i in evidence if i["kind"] == "halo" for role in i["roles"]}
                | {"false_color_composite", "geochemistry"})
    partners = [dict(i, roles=[r for r in i["roles"] if r not in left_out]) for i in evidence
                if i["level"] == "critical" and i["kind"] == "coincidence" and i.get("with") == core["id"]]
    return [core] + [p for p in partners[:1] if p["roles"]]


def roles_of(ws, item_ids: list) -> set:
    """Every role the deposit model's items `item_ids` can be tested on."""
    roles = set()
    for item in ws.deposit_model.get("evidence", []):
        if item["id"] in item_ids:
            roles |= set(item["roles"])
    return roles


def legend_informative(info) -> bool:
    """Whether a categorical layer's unit names describe rocks ('Cretaceous limestone', 'Monzonite'), not bare
    codes ('LPZ'): some name has several words or a known lithology word."""
    from ...plugin.tools.lithology_words import lithology_groups

    words = {w for group in lithology_groups().values() for w in group} | set(lithology_groups())
    return any(len(str(name).split()) > 1 or str(name).strip().lower().rstrip("s") in words
               for name in info.units.values())


def favourable_units(info, model: dict) -> list[str]:
    """Legend names of a categorical layer that match the deposit model's favourable unit keywords, as the
    favourability surface matches them (`matched_units`: whole words, plurals, synonyms, not negated)."""
    legend = {int(code): str(name) for code, name in info.units.items()}
    return sorted({legend[code] for code in matched_units(legend, model.get("favourable_units", []))})


def host_units(info, ws) -> list[str]:
    """The units of a categorical layer a host item is mapped as: those the user names, else the legend names
    matching the deposit model's favourable unit keywords (none on a legend of bare codes)."""
    named = list(ws.favourable_units.get(info.name) or [])
    return named or (favourable_units(info, ws.deposit_model) if legend_informative(info) else [])
