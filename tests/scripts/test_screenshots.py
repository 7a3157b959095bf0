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

    from lodestar.plugin.engine.report import FIGURES
    from lodestar.plugin.engine.report_map import WIDTH_PX

    shots = screenshots.Shots(qgis_app, tmp_path / "docs", tmp_path / "scratch")
    screenshots.shot_report(shots)
    assert shots.written == [tmp_path / "docs" / "report.png", tmp_path / "docs" / "report_map.png"]
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


def test_the_readme_shows_the_report_screenshots():
    import re

    import screenshots

    readme = (screenshots.ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("### The report", 1)[1].split("\n### ", 1)[0]
    shown = re.findall(r"!\[[^\]]+\]\((docs/[^)]+\.png)\)", section)
    assert shown == ["docs/report.png", "docs/report_map.png"]
    for name in shown:
        image = Image.open(screenshots.ROOT / name)
        assert image.width >= 900
    assert "make screenshots" in section


def test_the_readme_shows_the_dock_before_and_after_a_run():
    import re

    import screenshots

    assert {"dock_before", "dock_after"} <= set(screenshots.SHOTS)
    readme = (screenshots.ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("### The dock panel", 1)[1].split("\n### ", 1)[0]
    shown = re.findall(r"!\[[^\]]+\]\((docs/[^)]+\.png)\)", section)
    assert shown == ["docs/dock-before.png", "docs/dock-after.png"]
    for name in shown:
        assert Image.open(screenshots.ROOT / name).width >= 1200
    assert "make screenshots" in section
