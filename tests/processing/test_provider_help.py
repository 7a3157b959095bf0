"""Every Lodestar algorithm has its own icon (an SVG drawn for it) and a help link to the README section that
documents it, through the Processing registry as the Toolbox sees them."""
from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote, urlparse

from qgis.PyQt.QtSvg import QSvgRenderer

from lodestar.processing.base import DEFAULT_ICON, README, readme_anchor
from lodestar.processing.provider import algorithm_classes


def _readme_anchors() -> set[str]:
    text = README.read_text(encoding="utf-8")
    return {readme_anchor(m.group(1)) for m in re.finditer(r"^#{1,6}\s+(.+?)\s*$", text, flags=re.MULTILINE)}


def test_the_anchor_rule_is_the_markdown_one():
    assert readme_anchor("Spatial graph, localization, evaluation") == "spatial-graph-localization-evaluation"
    assert readme_anchor("The reasoning engine (`lodestar:analyze`)") == "the-reasoning-engine-lodestaranalyze"
    assert readme_anchor("Executor tools (each a core function and a Processing algorithm)") == (
        "executor-tools-each-a-core-function-and-a-processing-algorithm")


def test_every_algorithm_has_its_own_icon(lodestar_registry, qgis_app):
    ids = [cls.ALGORITHM_ID for cls in algorithm_classes()]
    assert len(ids) >= 12
    paths = []
    for algorithm_id in ids:
        algorithm = lodestar_registry.algorithmById(f"lodestar:{algorithm_id}")
        path = Path(algorithm.svgIconPath())
        assert path.is_file(), algorithm_id
        assert path.name == f"alg_{algorithm_id}.svg"
        assert path != DEFAULT_ICON
        assert QSvgRenderer(str(path)).isValid(), path
        image = algorithm.icon().pixmap(24, 24).toImage()
        drawn = sum(image.pixelColor(x, y).alpha() > 0 for x in range(24) for y in range(24))
        assert drawn > 24 * 24 // 4, algorithm_id  # the drawing renders at Toolbox size
        paths.append(path)
    assert len(set(paths)) == len(ids)
    # distinct drawings, not one file copied under twelve names (nor the provider's star)
    contents = {path.read_bytes() for path in paths} | {DEFAULT_ICON.read_bytes()}
    assert len(contents) == len(ids) + 1


def test_every_algorithm_links_to_its_readme_section(lodestar_registry):
    anchors = _readme_anchors()
    expected = {
        "analyze": "the-reasoning-engine-lodestaranalyze",
        "color_regions": "executor-tools-each-a-core-function-and-a-processing-algorithm",
        "evaluate": "spatial-graph-localization-evaluation-segment-anything-batches",
        "refine_zones_sam": "spatial-graph-localization-evaluation-segment-anything-batches",
        "analyze_cases": "spatial-graph-localization-evaluation-segment-anything-batches",
    }
    for cls in algorithm_classes():
        algorithm = lodestar_registry.algorithmById(f"lodestar:{cls.ALGORITHM_ID}")
        url = urlparse(algorithm.helpUrl())
        assert url.scheme == "file"
        assert Path(unquote(url.path)) == README and README.is_file()
        assert url.fragment in anchors, (cls.ALGORITHM_ID, url.fragment)
        assert url.fragment != "what-it-does", f"{cls.ALGORITHM_ID} has no README section of its own"
        if cls.ALGORITHM_ID in expected:
            assert url.fragment == expected[cls.ALGORITHM_ID]
        # the section names the algorithm
        section = _section(url.fragment)
        assert f"lodestar:{cls.ALGORITHM_ID}" in section, cls.ALGORITHM_ID


def test_the_shipped_model_links_to_its_readme_section(lodestar_registry):
    model = lodestar_registry.algorithmById("lodestar:prospectivity_chain")
    url = urlparse(model.helpUrl())
    assert url.scheme == "file" and Path(unquote(url.path)) == README
    assert url.fragment == "spatial-graph-localization-evaluation-segment-anything-batches"
    assert url.fragment in _readme_anchors()
    assert "lodestar:prospectivity_chain" in _section(url.fragment)


def _section(anchor: str) -> str:
    lines = README.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines)
                 if line.startswith("#") and readme_anchor(line.lstrip("#")) == anchor)
    level = len(lines[start]) - len(lines[start].lstrip("#"))
    end = next((i for i in range(start + 1, len(lines))
                if lines[i].startswith("#") and len(lines[i]) - len(lines[i].lstrip("#")) <= level), len(lines))
    return "\n".join(lines[start:end])


def test_the_shipped_models_show_titles_and_keep_their_ids(lodestar_registry):
    """The Toolbox listed the graphical models by bare id ('prospectivity_chain'): each shows its title now, and is
    still found (and run, by a saved model or a script) by its file's name."""
    from lodestar.processing.provider import MODEL_TITLES, model_files

    for path in model_files():
        model = lodestar_registry.algorithmById(f"lodestar:{path.stem}")
        assert model is not None and model.displayName() == MODEL_TITLES[path.stem] and "_" not in model.displayName()
        copy = model.create()
        assert copy.id() == f"lodestar:{path.stem}" and copy.displayName() == model.displayName()
