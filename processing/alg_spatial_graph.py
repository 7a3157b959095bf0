"""lodestar:spatial_graph - the cross-layer spatial graph of candidate zones: nodes, edges and GraphML."""
from __future__ import annotations

from qgis.core import (
    QgsProcessing,
    QgsProcessingOutputNumber,
    QgsProcessingParameterFileDestination,
    QgsProcessingParameterMultipleLayers,
    QgsProcessingParameterNumber,
)

from ..plugin.errors import LodestarError
from ..plugin.graph import GraphParams, build_graph, write_graphml
from ..plugin.vector_io import write_vector
from .base import Group, LodestarAlgorithm
from .params import number_parameter, output_path, range_problem, vector_destination, zone_frames
from .styling import style_output


class SpatialGraphAlgorithm(LodestarAlgorithm):
    ALGORITHM_ID = "spatial_graph"
    DISPLAY_NAME = "Spatial graph of candidate zones"
    GROUP = Group.GRAPH
    HELP = (
        "Builds the cross-image spatial graph of STA-CoT in map coordinates. Nodes are the candidate zones of every "
        "layer given (reprojected to the first layer's CRS; a geographic CRS is replaced by its UTM zone). For each "
        "pair of zones from different layers: an overlap edge when the polygons' IoU exceeds the threshold "
        "(confidence = IoU), otherwise a proximity edge when the gap between them is within reach (the larger of "
        "the distance given and the relative distance times the zones' mean size), with a confidence that decays "
        "with the gap. Every edge is stored in both directions with its direction word (north ... north-west, "
        "or overlaps). Nodes get degree, betweenness, connected component and chain flags (a chain: three linked "
        "zones of three different roles). Outputs: nodes (polygons), edges (lines between centroids) and GraphML."
    )

    INPUT = "INPUT"
    IOU_THRESHOLD = "IOU_THRESHOLD"
    MAX_DISTANCE = "MAX_DISTANCE"
    RELATIVE_DISTANCE = "RELATIVE_DISTANCE"
    DECAY = "DECAY"
    PROXIMITY_CONFIDENCE = "PROXIMITY_CONFIDENCE"
    EXACT_MAX = "BETWEENNESS_EXACT_MAX"
    SAMPLES = "BETWEENNESS_SAMPLES"
    OUTPUT_NODES = "OUTPUT_NODES"
    OUTPUT_EDGES = "OUTPUT_EDGES"
    OUTPUT_GRAPHML = "OUTPUT_GRAPHML"
    NODES = "NODES"
    EDGES = "EDGES"
    COMPONENTS = "COMPONENTS"
    CHAIN_NODES = "CHAIN_NODES"

    def initAlgorithm(self, config=None):  # noqa: N802 (QGIS API name)
        d = GraphParams()
        double, integer = QgsProcessingParameterNumber.Double, QgsProcessingParameterNumber.Integer
        zones = QgsProcessingParameterMultipleLayers(self.INPUT, "Candidate zone layers",
                                                     QgsProcessing.TypeVectorPolygon)
        zones.setHelp("Polygon layers of candidate zones (e.g. the outputs of the executor tools). A layer without "
                      "a 'layer' field counts as one layer named after it; without 'role', the role is guessed from "
                      "its name.")
        params = [
            zones,
            number_parameter(self.IOU_THRESHOLD, "IoU threshold for overlap edges (0-1)", double, d.iou_threshold,
                             0.0, 1.0, "An overlap edge links two zones whose intersection over union exceeds this."),
            number_parameter(self.MAX_DISTANCE, "Proximity distance in map units (0 = relative only, >= 0)", double,
                             d.max_distance, 0.0, None,
                             "Zones at most this far apart (gap between the polygons) get a proximity edge."),
            number_parameter(self.RELATIVE_DISTANCE, "Proximity distance relative to zone size (>= 0)", double,
                             d.relative_distance, 0.0, None,
                             "Reach as a share of the two zones' mean size (square root of area); the larger of the "
                             "two reaches applies."),
            number_parameter(self.DECAY, "Proximity confidence decay (>= 0)", double, d.decay, 0.0, None,
                             "Proximity confidence = touching confidence x exp(-decay x gap / reach)."),
            number_parameter(self.PROXIMITY_CONFIDENCE, "Confidence of touching zones (0-1)", double,
                             d.proximity_confidence, 0.0, 1.0,
                             "Confidence of a proximity edge at zero gap; keep it at or below the IoU threshold so "
                             "that no proximity edge outweighs an overlap."),
            number_parameter(self.EXACT_MAX, "Exact betweenness up to this component size (>= 1)", integer,
                             d.betweenness_exact_max, 1, None,
                             "Components with more zones get betweenness estimated from sampled source zones."),
            number_parameter(self.SAMPLES, "Betweenness sample size (>= 1)", integer, d.betweenness_samples, 1,
                             None, "Source zones sampled (seeded) in components above the exact size."),
        ]
        nodes = vector_destination(self.OUTPUT_NODES, "Graph nodes", QgsProcessing.TypeVectorPolygon,
                                   "The zones with degree, degree_c, between_c (betweenness), component, comp_roles "
                                   "and chain.")
        edges = vector_destination(self.OUTPUT_EDGES, "Graph edges", QgsProcessing.TypeVectorLine,
                                   "Lines between zone centroids with source, target, type, confidence, direction, "
                                   "iou, gap.")
        graphml = QgsProcessingParameterFileDestination(self.OUTPUT_GRAPHML, "Graph (GraphML)",
                                                        "GraphML files (*.graphml)", optional=True)
        graphml.setHelp("The directed graph for networkx, Gephi or yEd; nodes carry their polygon as WKT.")
        for param in params + [nodes, edges, graphml]:
            self.addParameter(param)
        for key, label in ((self.NODES, "Number of zones"), (self.EDGES, "Number of directed edges"),
                           (self.COMPONENTS, "Number of connected components"), (self.CHAIN_NODES, "Zones on chains")):
            self.addOutput(QgsProcessingOutputNumber(key, label))

    def checkParameterValues(self, parameters, context):  # noqa: N802 (QGIS API name)
        problem = range_problem(self, parameters)
        return (False, problem) if problem else super().checkParameterValues(parameters, context)

    def run(self, parameters, context, feedback, progress) -> dict:
        frames = zone_frames(self, parameters, self.INPUT, context)
        if not frames:
            raise LodestarError("Choose at least one zone layer.")
        params = GraphParams(
            iou_threshold=self.parameterAsDouble(parameters, self.IOU_THRESHOLD, context),
            max_distance=self.parameterAsDouble(parameters, self.MAX_DISTANCE, context),
            relative_distance=self.parameterAsDouble(parameters, self.RELATIVE_DISTANCE, context),
            decay=self.parameterAsDouble(parameters, self.DECAY, context),
            proximity_confidence=self.parameterAsDouble(parameters, self.PROXIMITY_CONFIDENCE, context),
            betweenness_exact_max=self.parameterAsInt(parameters, self.EXACT_MAX, context),
            betweenness_samples=self.parameterAsInt(parameters, self.SAMPLES, context),
        )
        graph = build_graph(frames, params, progress.scaled(0, 90))
        for line in graph.log:
            progress.log(line)
        nodes_path = output_path(self, parameters, self.OUTPUT_NODES, context, "graph_nodes.gpkg")
        edges_path = output_path(self, parameters, self.OUTPUT_EDGES, context, "graph_edges.gpkg")
        write_vector(graph.nodes, nodes_path)
        write_vector(graph.edges, edges_path)
        style_output(context, nodes_path, "graph_nodes.qml")
        style_output(context, edges_path, "graph_edges.qml")
        result = {self.OUTPUT_NODES: nodes_path, self.OUTPUT_EDGES: edges_path}
        graphml_path = self.parameterAsFileOutput(parameters, self.OUTPUT_GRAPHML, context)
        if graphml_path:
            write_graphml(graph, graphml_path)
            result[self.OUTPUT_GRAPHML] = graphml_path
        summary = graph.summary()
        result.update({self.NODES: summary["nodes"], self.EDGES: summary["edges"],
                       self.COMPONENTS: summary["components"], self.CHAIN_NODES: summary["chain_nodes"]})
        return result
