"""Layer roles of the `lodestar-case/1` format, and the guesses of a role and of a favourable side from a layer's
name."""
from __future__ import annotations

import re
from pathlib import Path

from .errors import LodestarError
from .pathfinders import named_elements

ROLES = (
    "geological_map",
    "hydrothermal_alteration",
    "silicification",
    "propylitic_alteration",
    "argillic_alteration",
    "iron_oxide",
    "false_color_composite",
    "structure",
    "geochemistry",
    "geophysics",
    "other",
)

_ROLE_WORDS = (
    ("false_color_composite", r"false.?colou?r|fcc|composite|rgb"),
    ("silicification", r"silic|silica|quartz|\bsi\b"),
    ("propylitic_alteration", r"propyl|chlorite|epidote|mg.?oh\b|carbonate|calcite"),
    ("argillic_alteration", r"argill|kaolin|alunite|clay|sericite|phyllic"),
    ("iron_oxide", r"iron|ferric|ferrous|goethite|hematite|gossan|\bfe\b"),
    ("hydrothermal_alteration", r"hydrotherm|alter|al.?oh\b|hydroxyl|oh.?index"),
    ("structure", r"fault|falha|lineament|structur|fracture|shear"),
    ("geochemistry", r"geochem|stream|sediment|soil|assay|\bpp[mb]\b"),
    ("geophysics", r"magnet|gravity|bouguer|radiometr|gamma|geophys|\bmag\b|\btmi\b"),
    ("geological_map", r"geolog|litho|unit|formation|bedrock"),
)
"""Words that tell a role, tried in order, first on a layer's name and file name, then also on its title, abstract,
keywords and band names. Radiometric channels (eTh, U ppm, K/Th, K pct) named so are geophysics before any word
counts; where no word tells a role, a name holding element symbols ("as_rcl", plugin.pathfinders) is
geochemistry. Symbols are read in the name and file name only ("U.S." or "K. Smith" in an abstract names no
channel), and element names are not read ("gold" may name the known deposits)."""
_RADIOMETRIC = r"\be?(th|u)\b|\b(k|th|u) ?/ ?(k|th|u)\b|\bk (pct|percent)\b"
_NO_EVIDENCE = (r"\b(sr|st) b\d+\b|\bb(0\d|1[0-2]|8a)\b|\bband ?\d+\b|\bdem\b|\bdtm\b|\bdsm\b|srtm|elevation"
                r"|hillshade|topograph")
"""A single satellite band named so (Landsat "..._SR_B4", Sentinel-2 "B04", "B8A", "band 7") or a terrain model:
role "other", no evidence of its own; its "SR" or "MN" names no element. Read in the names only, once no word of
the names or the metadata tells a role ("aster_b4_b6" described as an AlOH index is one), and before symbols; a
one-digit batch tag ("Cu_B1") is no band."""


def check_role(role: str) -> str:
    """Return the role if it is known; else raise an error that lists the known roles."""
    role = (role or "").strip().lower()
    if role not in ROLES:
        raise LodestarError(f"Unknown layer role {role!r}. Known roles: {', '.join(ROLES)}.")
    return role


def guess_role(*texts: str, named=None) -> str:
    """Guess a role from a layer's name, file name or metadata (`texts`, the layer's name first); 'other' when
    nothing matches. `named`: the name and file name (default: the first text), read first and alone for symbols:
    an abstract's "K. Smith" names no potassium layer, and its words count only when the names tell nothing."""
    names = [name for name in (texts[:1] if named is None else named) if name]
    if any(re.search(_RADIOMETRIC, _plain(name)) for name in names):
        return "geophysics"
    for words in (names, texts):
        text = _plain(" ".join(t for t in words if t))
        for role, pattern in _ROLE_WORDS:
            if re.search(pattern, text):
                return role
    if any(re.search(_NO_EVIDENCE, _plain(name)) for name in names):
        return "other"
    return "geochemistry" if any(named_elements(name, by_name=False) for name in names) else "other"


def _plain(text: str) -> str:
    """Lower case, with '_', '-' and '.' read as spaces."""
    return re.sub(r"[_.-]", " ", text.lower())


def tagged_role(tags: dict) -> str | None:
    """The role a raster written by Lodestar carries in its LODESTAR_ROLE metadata tag, if any and known."""
    role = str((tags or {}).get("LODESTAR_ROLE", "")).strip().lower()
    return role if role in ROLES else None


def guess_favourable(path, role: str, name: str) -> str:
    """'low' for a structure raster that measures distance: named so ('distance to faults'), or graded (more than
    two values: distance classes such as the Great Basin's 'falha_rcl') and not named as a density or a count;
    else 'high' (a fault mask, a lineament density, every other role)."""
    if role != "structure":
        return "high"
    text = f"{name} {Path(path).stem}".lower()
    if "dist" in text:
        return "low"
    if re.search(r"dens|intens|count|freq|kde|heat", text):
        return "high"
    return "low" if _graded_raster(path) else "high"


def _graded_raster(path) -> bool:
    """Whether a raster file holds more than two distinct values (False for vectors and unreadable files)."""
    import rasterio
    from rasterio.errors import RasterioError

    from .confinement import dataset_driver, guarded_gdal, referenced_files

    try:
        referenced_files(path)  # a VRT reading the network or files elsewhere is not opened to guess
        with guarded_gdal(), rasterio.open(path, driver=dataset_driver(path)) as ds:
            if ds.count != 1:
                return False
            scale = max(1, max(ds.width, ds.height) // 128)
            values = ds.read(1, masked=True, out_shape=(max(1, ds.height // scale), max(1, ds.width // scale)))
    except (RasterioError, OSError, ValueError, LodestarError):
        return False
    import numpy as np

    return int(np.unique(values.compressed()).size) > 2
