"""lodestar:analyze_cases through real Processing: a folder of cases, one broken, into a table."""
from __future__ import annotations

import csv
import json

import pytest
import synthetic_cases


def test_analyze_cases_writes_the_table_and_records_the_broken_case(run, tmp_path):
    cases = tmp_path / "cases"
    synthetic_cases.make_case(cases / "one", 4, "epithermal", 120, case_id="epi")
    (cases / "two").mkdir()
    (cases / "two" / "case.json").write_text(json.dumps({"format": "lodestar-case/1", "id": "two"}))
    result = run("lodestar:analyze_cases", {"CASES": str(cases), "BACKEND": 0, "MAX_ROUNDS": 2,
                                            "OUTPUT_FOLDER": str(tmp_path / "out"), "OUTPUT_TABLE": "memory:"})
    assert result["CASE_COUNT"] == 2 and result["ERRORS"] == 1
    with open(result["OUTPUT_CSV"], newline="") as fh:
        rows = {row["case_id"]: row for row in csv.DictReader(fh)}
    assert rows["two"]["answer"] == "Error" and "'question' is missing" in rows["two"]["error"]
    assert rows["epi"]["answer"] in ("A", "B") and rows["epi"]["truth"] == "A" and 1 <= int(rows["epi"]["rounds"]) <= 2
    summary = json.loads(result["SUMMARY"])
    assert summary["cases"] == 2 and summary["scored"] == 1
    assert summary["accuracy"] == (1.0 if rows["epi"]["answer"] == "A" else 0.0)
    assert summary["macro_f1_interval"] == [summary["macro_f1"]] * 2  # one scored case: every resample is the same
    table = result["OUTPUT_TABLE"]
    if isinstance(table, str):
        from qgis.core import QgsProcessingUtils

        table = QgsProcessingUtils.mapLayerFromString(table, None)
    features = {f["case_id"]: f for f in table.getFeatures()}
    assert set(features) == {"epi", "two"} and features["two"]["error"] == rows["two"]["error"]
    assert (tmp_path / "out" / "epi").is_dir()


def test_analyze_cases_rejects_a_folder_without_cases(run, tmp_path):
    from qgis.core import QgsProcessingException

    with pytest.raises(QgsProcessingException, match="No case.json"):
        run("lodestar:analyze_cases", {"CASES": str(tmp_path), "OUTPUT_FOLDER": str(tmp_path / "out")})


def test_analyze_cases_reads_the_backend_like_analyze(run, tmp_path):
    from qgis.core import QgsProcessingException

    synthetic_cases.make_case(tmp_path / "cases" / "one", 4, "barren", 110)
    with pytest.raises(QgsProcessingException, match="endpoint base URL in BASE_URL"):
        run("lodestar:analyze_cases", {"CASES": str(tmp_path / "cases"), "BACKEND": 1,
                                       "OUTPUT_FOLDER": str(tmp_path / "out")})


def test_every_parameter_has_help(run):
    from qgis.core import QgsApplication

    alg = QgsApplication.processingRegistry().algorithmById("lodestar:analyze_cases")
    assert alg is not None and alg.shortHelpString()
    for param in alg.parameterDefinitions():
        assert param.help(), f"analyze_cases.{param.name()} has no help text"
    model = QgsApplication.processingRegistry().algorithmById("lodestar:prospectivity_chain")
    help_content = model.helpContent()  # a model keeps its parameters' help in its help content
    assert "spatial graph" in help_content["ALG_DESC"]
    for param in model.parameterDefinitions():
        if not param.isDestination():
            assert help_content.get(param.name()), f"prospectivity_chain.{param.name()} has no help text"


def test_analyze_cases_calibrates_each_case_on_its_deposits_and_refuses_a_case_without(run, tmp_path):
    """CALIBRATE=1 (weights of evidence) and AREA_SHARE reach every case: the Great Basin case gets its
    cross-validated surface and targets at the asked share; a case without deposits is an error row saying why."""
    import shutil
    from pathlib import Path

    import rasterio

    cases = tmp_path / "cases"
    shutil.copytree(Path(__file__).resolve().parents[1] / "data" / "great-basin-gold", cases / "gb")
    synthetic_cases.make_case(cases / "neg", 8, "barren", 120, case_id="neg")
    result = run("lodestar:analyze_cases", {"CASES": str(cases), "BACKEND": 0, "MAX_ROUNDS": 1, "CALIBRATE": 1,
                                            "AREA_SHARE": 5, "FOLDS": 4, "OUTPUT_FOLDER": str(tmp_path / "out")})
    with open(result["OUTPUT_CSV"], newline="") as fh:
        rows = {row["case_id"]: row for row in csv.DictReader(fh)}
    assert rows["neg"]["answer"] == "Error" and "Calibration needs known deposits" in rows["neg"]["error"]
    assert rows["great-basin-gold"]["answer"] == "A" and rows["great-basin-gold"]["error"] == ""
    record = json.loads((tmp_path / "out" / "great-basin-gold" / "record.json").read_text(encoding="utf-8"))
    assert record["parameters"]["favourability"]["calibrate"] == "wofe"
    assert record["parameters"]["favourability"]["area_share"] == pytest.approx(0.05)
    validation = record["favourability"]["validation"]
    assert validation["cv"]["basis"].startswith("cross-validated") and validation["method"] == "wofe"
    assert validation["models"] == []  # weights of evidence alone: no other model compared
    assert record["parameters"]["favourability"]["cross_validation"] == {"folds": 4, "seed": 0}
    assert record["favourability"]["calibration"]["folds"].startswith("4-fold spatial block cross-validation")
    # the table row says what was fitted and how it scored beside the surfaces that used no deposit data
    gb = rows["great-basin-gold"]
    assert gb["calibrated_with"] == "wofe" and gb["fit_used"] == ("no" if validation["refused"] else "yes")
    for column, key in (("cv_auc", "cv"), ("knowledge_auc", "knowledge"), ("baseline_auc", "equal_weight")):
        assert float(gb[column]) == pytest.approx(validation[key]["auc"])
    assert rows["neg"]["calibrated_with"] == "" and rows["neg"]["cv_auc"] == ""
    with rasterio.open(tmp_path / "out" / "great-basin-gold" / "favourability_cv.tif") as ds:
        assert ds.dtypes[0] == "float32" and 0.0 <= float(ds.read(1, masked=True).max()) <= 1.0
