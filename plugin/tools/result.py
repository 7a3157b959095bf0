"""The result object every executor tool returns."""
from __future__ import annotations

from dataclasses import dataclass, field

import geopandas as gpd


@dataclass
class ToolResult:
    """Zones a tool marked (zones.ZONE_COLUMNS schema, analysis CRS) plus what it did and saw."""

    tool: str
    layer: str
    zones: gpd.GeoDataFrame
    params: dict = field(default_factory=dict)
    stats: dict = field(default_factory=dict)
    log: list[str] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.zones)
