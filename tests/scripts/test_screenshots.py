"""scripts/screenshots.py: each shot is one function; the report shot renders the sample run's report as a
browser shows it (answer and map on top) and keeps the report's map figure."""
from __future__ import annotations

import numpy as np
from PIL import Image


def test_every_shot_is_one_registered_function():
    import screenshots

    assert {"dock", "report"} <= set(screenshots.SHOTS)  # more shots may be listed
    for name, shot in screenshots.SHOTS.items():
        assert shot.__name__ == f"shot_{name}" and shot.__doc__.startswith("docs/")


def test_the_report_shot_shows_the_summary_of_the_sample_run(qgis_app, tmp_path):
    import screenshots

    from lodestar.plugin.report.report import FIGURES
    from lodestar.plugin.report.report_map import WIDTH_PX

    shots = screenshots.Shots(qgis_app, tmp_path / "docs", tmp_path / "scratch")
    screenshots.shot_report(shots)
    assert shots.written == [tmp_path / "docs" / name for name in ("report.png", "report_map.png", "report-target.png")]
    page = Image.open(tmp_path / "docs" / "report.png").convert("RGB")
    # as wide as the browser window, down to the end of the summary's targets table (the map is 900 px wide)
    assert page.width == screenshots.REPORT_WIDTH and 1200 < page.height <= screenshots.REPORT_MAX_HEIGHT
    pixels = np.asarray(page).reshape(-1, 3)
    red = (pixels[:, 0] > 200) & (pixels[:, 1] < 60) & (pixels[:, 2] < 90)  # the targets' outlines
    green = (pixels[:, 0] < 240) & (pixels[:, 1] > 230) & (pixels[:, 2] < 240) & (pixels[:, 1] > pixels[:, 0] + 10)
    assert red.sum() > 500 and green.sum() > 1000  # the outlines and the answer banner / favourability colours
    figure = Image.open(tmp_path / "docs" / "report_map.png")
    run_folder = shots.sample_run().outputs["report"].parent
    assert figure.width == WIDTH_PX and figure.tobytes() == Image.open(run_folder / FIGURES["map"]).tobytes()
    assert shots.sample_run().answer == "A"
    card = Image.open(tmp_path / "docs" / "report-target.png")  # one target's card, not the page's top
    assert card.width == screenshots.REPORT_WIDTH and 300 < card.height < 1000


def test_the_readme_shows_the_report_map():
    import re

    import screenshots

    readme = (screenshots.ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("### The report", 1)[1].split("\n### ", 1)[0]
    shown = re.findall(r"!\[[^\]]+\]\((docs/[^)]+\.png)\)", section)
    assert shown == ["docs/report_map.png"]
    assert Image.open(screenshots.ROOT / shown[0]).width >= 900
    assert "make screenshots" in section


def test_the_readme_first_run_shows_each_step_in_order():
    """The five-step first run shows the dock before Run, its Reasoning and Results tabs after, and the report;
    every picture is a shot of `make screenshots`."""
    import re

    import screenshots

    assert {"dock_before", "dock_reasoning", "dock_after", "report"} <= set(screenshots.SHOTS)
    readme = (screenshots.ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## First run: the bundled sample in five steps", 1)[1].split("\n## ", 1)[0]
    shown = re.findall(r"!\[[^\]]+\]\((docs/[^)]+\.png)\)", section)
    assert shown == ["docs/dock-before.png", "docs/dock-reasoning.png", "docs/dock-after.png", "docs/report.png"]
    for name in shown:
        assert Image.open(screenshots.ROOT / name).width >= 1100
    assert "make screenshots" in section
    steps = re.findall(r"^(\d)\. \*\*", section, flags=re.MULTILINE)
    assert steps == ["1", "2", "3", "4", "5"]


def test_the_readme_is_short_and_its_links_resolve():
    """Written for geologists first: under 300 lines, the walkthrough before the reference; every relative link of
    the README and of docs/ leads to a file that exists."""
    import re

    import screenshots

    readme = (screenshots.ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) < 300
    assert readme.index("## Install") < readme.index("## First run") < readme.index("## What it does") \
        < readme.index("## Processing and headless use") < readme.index("## Results")
    assert "make demo" in readme and "make test" in readme
    from lodestar.processing.base import readme_anchor

    def anchors(path):
        text = path.read_text(encoding="utf-8")
        return {readme_anchor(m.group(1)) for m in re.finditer(r"^#{1,6}\s+(.+?)\s*$", text, flags=re.MULTILINE)}

    pages = [screenshots.ROOT / "README.md", *sorted((screenshots.ROOT / "docs").glob("*.md"))]
    for page in pages:
        for target, fragment in re.findall(r"\]\(([^)#\s]*)(?:#([^)\s]*))?\)", page.read_text(encoding="utf-8")):
            if target.startswith(("http://", "https://")):
                continue
            linked = page.parent / target if target else page
            assert linked.exists(), f"{page.name} links to {target}, which does not exist"
            if fragment:
                assert fragment in anchors(linked), f"{page.name} links to {target}#{fragment}: no such heading"
