"""lodestar:localize - prospectivity polygons from the spatial graph's most central zones."""
from __future__ import annotations

from qgis.core import (
    QgsProcessing,
    QgsProcessingOutputNumber,
    QgsProcessingParameterEnum,
    QgsProcessingParameterMultipleLayers,
    QgsProcessingParameterNumber,
    QgsProcessingParameterString,
    QgsProcessingParameterVectorLayer,
)

from ..plugin.errors import LodestarError
from ..plugin.graph import build_graph, graph_from_frames
from ..plugin.localization import AREA_WEIGHT_RANGE, RANGES, LocalizationParams, localize
from ..plugin.reason.knowledge import load_knowledge
from ..plugin.vector_io import read_vector, write_vector
from .base import Group, LodestarAlgorithm
from .layer_export import layer_path
from .params import number_parameter, output_path, range_problem, vector_destination, zone_frames
from .styling import style_output

NO_MODEL = "none (built-in defaults)"


def parse_area_weights(text: str) -> dict:
    """'silicification=1.5, Propylitic Alteration=1.2' -> {name: value} (validated by LocalizationParams)."""
    weights = {}
    for item in (text or "").replace(";", ",").split(","):
        if not item.strip():
            continue
        if "=" not in item:
            raise LodestarError(
                f"Area type weight {item.strip()!r} needs the form name=value (e.g. silicification=1.5).")
        name, value = item.split("=", 1)
        weights[name.strip()] = value.strip()
    return weights


class LocalizeAlgorithm(LodestarAlgorithm):
    ALGORITHM_ID = "localize"
    DISPLAY_NAME = "Localize deposits (prospectivity polygons)"
    GROUP = Group.GRAPH
    HELP = (
        "The localization tool of STA-CoT: scores every zone of the spatial graph (weighted degree, betweenness "
        "and chain presence, times the weight of its area type and its evidence rank within its layer; very large "
        "zones are scaled down), takes the most important areas as seeds (distinct places), adds their one-hop "
        "neighbours (clipped to the seed's surroundings) and their two-hop ring expanded by the hop-2 factors, and "
        "merges touching areas into prospectivity polygons ranked by score (fields rank, score, zones, roles, "
        "n_zones, seeds, area_m2).\n"
        "Give either candidate zone layers (the graph is built with default settings) or the nodes and edges "
        "written by 'Spatial graph of candidate zones'. Parameters left empty take the chosen deposit model's "
        "values from the knowledge base, else the defaults; values out of their range are rejected."
    )

    ZONES = "ZONES"
    NODES = "NODES"
    EDGES = "EDGES"
    DEPOSIT_MODEL = "DEPOSIT_MODEL"
    DEGREE_WEIGHT = "DEGREE_WEIGHT"
    BETWEENNESS_WEIGHT = "BETWEENNESS_WEIGHT"
    CHAIN_WEIGHT = "CHAIN_WEIGHT"
    W_SILICIFICATION = "W_SILICIFICATION"
    W_PROPYLITIC = "W_PROPYLITIC"
    W_HYDROTHERMAL = "W_HYDROTHERMAL"
    W_FALSE_COLOR = "W_FALSE_COLOR"
    AREA_WEIGHTS = "AREA_WEIGHTS"
    IMPORTANT_AREAS = "IMPORTANT_AREAS"
    HOP2_HEIGHT = "HOP2_HEIGHT"
    HOP2_WIDTH = "HOP2_WIDTH"
    CLIP_RATIO = "CLIP_RATIO"
    OUTPUT = "OUTPUT"
    AREAS = "AREAS"

    NUMBERS = (
        (DEGREE_WEIGHT, "degree_centrality_weight", "Degree centrality weight",
         "How much a zone's direct links to zones of other layers count (weighted by edge confidence)."),
        (BETWEENNESS_WEIGHT, "betweenness_centrality_weight", "Betweenness centrality weight",
         "How much zones that bridge different groups of evidence count."),
        (CHAIN_WEIGHT, "chain_presence_weight", "Chain presence weight",
         "Bonus for zones on a chain (three linked zones of three different roles): where several geological "
         "processes meet."),
        (IMPORTANT_AREAS, "important_areas_count", "Number of important areas",
         "How many seed areas (distinct places) the prospectivity polygons grow from."),
        (HOP2_HEIGHT, "hop2_expansion_height", "Hop-2 expansion height",
         "Vertical scale of the two-hop ring's polygons, to reach peripheral mineralization."),
        (HOP2_WIDTH, "hop2_expansion_width", "Hop-2 expansion width",
         "Horizontal scale of the two-hop ring's polygons, to reach peripheral mineralization."),
        (CLIP_RATIO, "clip_ratio", "Neighbour clip ratio",
         "Neighbour polygons are clipped to the seed grown by this many times its size (square root of area); "
         "0 keeps whole polygons."),
    )
    AREA_TYPES = (
        (W_SILICIFICATION, "Silicification Zone"),
        (W_PROPYLITIC, "Propylitic Alteration"),
        (W_HYDROTHERMAL, "Hydrothermal Alteration"),
        (W_FALSE_COLOR, "False Color Composition"),
    )

    def initAlgorithm(self, config=None):  # noqa: N802 (QGIS API name)
        double, integer = QgsProcessingParameterNumber.Double, QgsProcessingParameterNumber.Integer
        zones = QgsProcessingParameterMultipleLayers(self.ZONES, "Candidate zone layers",
                                                     QgsProcessing.TypeVectorPolygon, optional=True)
        zones.setHelp("Zone layers to build the spatial graph from (with default graph settings); leave empty when "
                      "giving graph nodes and edges.")
        nodes = QgsProcessingParameterVectorLayer(self.NODES, "Graph nodes", [QgsProcessing.TypeVectorPolygon],
                                                  optional=True)
        nodes.setHelp("Nodes written by 'Spatial graph of candidate zones' (used instead of zone layers).")
        edges = QgsProcessingParameterVectorLayer(self.EDGES, "Graph edges", [QgsProcessing.TypeVectorLine],
                                                  optional=True)
        edges.setHelp("Edges written by 'Spatial graph of candidate zones', with the nodes.")
        model = QgsProcessingParameterEnum(self.DEPOSIT_MODEL, "Deposit model (defaults)",
                                           options=self._model_options(), defaultValue=0)
        model.setHelp("A deposit model of the knowledge base whose localization settings fill the parameters left "
                      "empty.")
        params = [zones, nodes, edges, model]
        for key, name, label, help_text in self.NUMBERS:
            low, high = RANGES[name]
            kind = integer if name == "important_areas_count" else double
            params.append(number_parameter(key, f"{label} ({low}-{high})", kind, None, low, high,
                                           f"{help_text} Empty: the deposit model's value or the default.",
                                           optional=True))
        low, high = AREA_WEIGHT_RANGE
        for key, name in self.AREA_TYPES:
            params.append(number_parameter(key, f"{name} weight ({low}-{high})", double, None, low, high,
                                           "Weight of zones of this area type (role). Empty: the deposit model's "
                                           "value or 1.0.", optional=True))
        weights = QgsProcessingParameterString(self.AREA_WEIGHTS, "Other area type weights", optional=True)
        weights.setHelp(f"Weights of other roles as name=value pairs separated by commas, e.g. "
                        f"'structure=1.3, geochemistry=1.5' (each {low}-{high}).")
        output = vector_destination(self.OUTPUT, "Prospectivity polygons", QgsProcessing.TypeVectorPolygon,
                                    "Ranked prospectivity polygons (rank 1 = most prospective).")
        for param in params + [weights, output]:
            self.addParameter(param)
        self.addOutput(QgsProcessingOutputNumber(self.AREAS, "Number of prospectivity polygons"))

    @staticmethod
    def _model_options() -> list[str]:
        return [NO_MODEL] + [m["id"] for m in load_knowledge()]

    def checkParameterValues(self, parameters, context):  # noqa: N802 (QGIS API name)
        problem = range_problem(self, parameters)
        return (False, problem) if problem else super().checkParameterValues(parameters, context)

    def params(self, parameters, context) -> LocalizationParams:
        """The deposit model's settings (if chosen) overlaid with the values given."""
        base = LocalizationParams()
        choice = self._model_options()[self.parameterAsEnum(parameters, self.DEPOSIT_MODEL, context)]
        if choice != NO_MODEL:
            model = next(m for m in load_knowledge() if m["id"] == choice)
            base = LocalizationParams.from_dict(model["localization"])
        given = {}
        for key, name, _, _ in self.NUMBERS:
            if parameters.get(key) not in (None, ""):
                given[name] = self.parameterAsDouble(parameters, key, context)
        weights = parse_area_weights(self.parameterAsString(parameters, self.AREA_WEIGHTS, context))
        for key, name in self.AREA_TYPES:
            if parameters.get(key) not in (None, ""):
                weights[name] = self.parameterAsDouble(parameters, key, context)
        if weights:
            given["area_type_weights"] = weights
        return LocalizationParams.from_dict(given, base)

    def run(self, parameters, context, feedback, progress) -> dict:
        params = self.params(parameters, context)
        nodes_layer = self.parameterAsVectorLayer(parameters, self.NODES, context)
        if nodes_layer is not None:
            edges_layer = self.parameterAsVectorLayer(parameters, self.EDGES, context)
            edges = read_vector(layer_path(edges_layer)) if edges_layer is not None else None
            graph = graph_from_frames(read_vector(layer_path(nodes_layer)), edges)
        else:
            if parameters.get(self.EDGES) not in (None, ""):
                raise LodestarError("Graph edges were given without their graph nodes; give both.")
            frames = zone_frames(self, parameters, self.ZONES, context)
            if not frames:
                raise LodestarError("Give candidate zone layers, or the graph nodes (and edges) to localize.")
            graph = build_graph(frames, progress=progress.scaled(0, 70))
        progress.log(f"Localization parameters: {params.as_dict()}")
        prospectivity = localize(graph, params, progress.scaled(70, 95))
        for line in graph.log:
            progress.log(line)
        path = output_path(self, parameters, self.OUTPUT, context, "prospectivity.gpkg")
        write_vector(prospectivity, path)
        style_output(context, path, "prospectivity.qml")
        return {self.OUTPUT: path, self.AREAS: len(prospectivity)}
