"""Build the graphical model resources/models/prospectivity_chain.model3 shipped with the provider.

The chain: three alteration layers (index rasters or MineBench-style colour renderings) ->
lodestar:color_regions on each (role set per layer) -> lodestar:spatial_graph over the three zone
layers -> lodestar:localize (prospectivity polygons) -> lodestar:evaluate against known deposits
(success-rate table and plot). Open the file in the Model Designer to change it; the provider lists it
as `lodestar:prospectivity_chain`. Run: `python scripts/make_prospectivity_model.py [OUT_FILE]`
(needs QGIS's Python).
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODEL_FILE = ROOT / "resources" / "models" / "prospectivity_chain.model3"
MODEL_NAME = "prospectivity_chain"

# (model input, label, role, help)
LAYERS = (
    ("HYDROTHERMAL", "Hydrothermal alteration (AlOH / sericite) layer", "hydrothermal_alteration",
     "An AlOH (sericite) index raster, or a colour rendering of one; high = altered."),
    ("SILICIFICATION", "Silicification layer", "silicification",
     "A quartz / silica index raster (e.g. ASTER TIR), or a colour rendering of one."),
    ("PROPYLITIC", "Propylitic alteration layer", "propylitic_alteration",
     "A MgOH (chlorite-epidote) index raster, or a colour rendering of one."),
)
HELP = (
    "Prospectivity chain: candidate zones on three alteration layers (Lodestar 'Colour / anomaly regions'), the "
    "spatial graph of those zones across layers, localization of the most central areas into ranked "
    "prospectivity polygons, and their evaluation against known deposits (recall, area reduction, success-rate "
    "curve). Layers may differ in CRS, extent and resolution. Open it in the Model Designer to add layers or change "
    "thresholds, and run it as a batch over many areas."
)


def build_model():
    """The QgsProcessingModelAlgorithm of the chain (QGIS must be initialised)."""
    from qgis.core import (
        QgsProcessing,
        QgsProcessingModelAlgorithm,
        QgsProcessingModelChildAlgorithm,
        QgsProcessingModelChildParameterSource,
        QgsProcessingModelOutput,
        QgsProcessingModelParameter,
        QgsProcessingParameterNumber,
        QgsProcessingParameterRasterLayer,
        QgsProcessingParameterVectorLayer,
    )
    from qgis.PyQt.QtCore import QPointF

    roles = _roles()
    model = QgsProcessingModelAlgorithm(MODEL_NAME, "Graphical models", "models")
    help_content = {"ALG_DESC": HELP, "ALG_CREATOR": "Lodestar", "ALG_HELP_CREATOR": "Lodestar"}

    def model_input(definition, x, y, help_text):
        definition.setHelp(help_text)
        help_content[definition.name()] = help_text  # models show parameter help from their help content
        component = QgsProcessingModelParameter(definition.name())
        component.setPosition(QPointF(x, y))
        model.addModelParameter(definition, component)
        return QgsProcessingModelChildParameterSource.fromModelParameter(definition.name())

    def static(value):
        return QgsProcessingModelChildParameterSource.fromStaticValue(value)

    def child(child_id, algorithm_id, description, x, y, sources):
        step = QgsProcessingModelChildAlgorithm(algorithm_id)
        step.setChildId(child_id)
        step.setDescription(description)
        step.setPosition(QPointF(x, y))
        for key, value in sources.items():
            step.addParameterSources(key, value if isinstance(value, list) else [value])
        # Every mandatory parameter gets a source, as the Model Designer gives it when a step is added: its
        # default as a static value (a step without one is drawn red and the model does not validate).
        for key, value in _mandatory_defaults(algorithm_id, sources).items():
            step.addParameterSources(key, [static(value)])
        return step

    def outputs(step, *items):
        """Expose child outputs (key, model output name, description) as model outputs."""
        exposed = {}
        for k, (key, name, description) in enumerate(items):
            out = QgsProcessingModelOutput(name, description)
            out.setChildId(step.childId())
            out.setChildOutputName(key)
            out.setPosition(step.position() + QPointF(180 * k, 90))
            exposed[name] = out
        step.setModelOutputs(exposed)

    percentile = QgsProcessingParameterNumber("PERCENTILE", "Anomaly percentile of index layers",
                                              QgsProcessingParameterNumber.Double, 90.0, minValue=50.0,
                                              maxValue=99.9)
    percentile_source = model_input(percentile, 120, 60, "Index layers keep pixels above this percentile "
                                    "(90: the top 10 %); colour renderings are read from their colour bar.")
    deposits_source = model_input(
        QgsProcessingParameterVectorLayer("DEPOSITS", "Known deposits", [QgsProcessing.TypeVectorPoint]), 900, 60,
        "Points of known deposits: the ground truth of the evaluation.")
    zone_sources = []
    for i, (key, label, role, help_text) in enumerate(LAYERS):
        layer_source = model_input(QgsProcessingParameterRasterLayer(key, label), 120 + 260 * i, 160, help_text)
        step = child(f"regions_{role}", "lodestar:color_regions", f"Anomaly regions: {role.replace('_', ' ')}",
                     120 + 260 * i, 300, {"INPUT": layer_source, "ROLE": static(roles.index(role) + 1),
                                          "PERCENTILE": percentile_source,
                                          "OUTPUT": static("TEMPORARY_OUTPUT")})
        model.addChildAlgorithm(step)
        zone_sources.append(QgsProcessingModelChildParameterSource.fromChildOutput(step.childId(), "OUTPUT"))
    graph = child("graph", "lodestar:spatial_graph", "Spatial graph of the zones", 380, 460,
                  {"INPUT": zone_sources, "OUTPUT_NODES": static("TEMPORARY_OUTPUT"),
                   "OUTPUT_EDGES": static("TEMPORARY_OUTPUT")})
    model.addChildAlgorithm(graph)
    localize = child("localize", "lodestar:localize", "Localize prospective areas", 380, 600, {
        "NODES": QgsProcessingModelChildParameterSource.fromChildOutput("graph", "OUTPUT_NODES"),
        "EDGES": QgsProcessingModelChildParameterSource.fromChildOutput("graph", "OUTPUT_EDGES"),
    })
    outputs(localize, ("OUTPUT", "prospectivity", "Prospectivity polygons"))
    model.addChildAlgorithm(localize)
    evaluate = child("evaluate", "lodestar:evaluate", "Evaluate against known deposits", 640, 740, {
        "PROSPECTIVITY": QgsProcessingModelChildParameterSource.fromChildOutput("localize", "OUTPUT"),
        "DEPOSITS": deposits_source,
        "ANALYSIS_RASTER": QgsProcessingModelChildParameterSource.fromModelParameter(LAYERS[0][0]),
    })
    outputs(evaluate, ("OUTPUT_TABLE", "success_table", "Success-rate table"),
            ("OUTPUT_PLOT", "success_plot", "Success-rate plot"))
    model.addChildAlgorithm(evaluate)
    model.setHelpContent(help_content)
    return model


def _mandatory_defaults(algorithm_id: str, given) -> dict:
    """The defaults of the mandatory input parameters of a registered algorithm that `given` leaves out."""
    from qgis.core import QgsApplication, QgsProcessingParameterDefinition

    algorithm = QgsApplication.processingRegistry().algorithmById(algorithm_id)
    if algorithm is None:
        raise SystemExit(f"{algorithm_id} is not registered: register the Lodestar provider first.")
    defaults = {}
    for definition in algorithm.parameterDefinitions():
        if (definition.name() in given or definition.isDestination()
                or definition.flags() & QgsProcessingParameterDefinition.FlagOptional):
            continue
        if definition.defaultValue() is None:
            raise SystemExit(f"{algorithm_id}: the mandatory parameter {definition.name()} has no default; "
                             "give it a source in build_model().")
        defaults[definition.name()] = definition.defaultValue()
    return defaults


def _roles() -> list[str]:
    """The lodestar-case/1 roles in the order of the ROLE enum of the Lodestar tools (index 0: guess)."""
    import importlib

    package = os.environ.get("LODESTAR_PACKAGE", "lodestar")
    return list(importlib.import_module(f"{package}.plugin.roles").ROLES)


def main(out=MODEL_FILE) -> Path:
    return write_model_file(build_model, out)


def write_model_file(build, out) -> Path:
    """Start a headless QGIS with Lodestar's provider registered, write the model `build()` makes to `out`."""
    from qgis.core import QgsApplication

    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    app = QgsApplication([], False)
    app.initQgis()
    try:
        sys.path.insert(0, str(ROOT / "build" / "testpkg"))
        sys.path.insert(0, str(ROOT / "tests"))
        import conftest  # noqa: F401  (links the checkout as the `lodestar` package)

        from lodestar.processing.provider import LodestarProvider

        # With the provider registered the model also saves the destination parameters of its outputs,
        # as the Model Designer does.
        provider = LodestarProvider()
        QgsApplication.processingRegistry().addProvider(provider)
        model = build()
        out = Path(out)
        out.parent.mkdir(parents=True, exist_ok=True)
        if not model.toFile(str(out)):
            raise SystemExit(f"Could not write {out}")
        return out
    finally:
        app.exitQgis()


if __name__ == "__main__":
    print(main(Path(sys.argv[1]) if len(sys.argv) > 1 else MODEL_FILE))
