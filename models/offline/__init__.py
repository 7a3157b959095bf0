"""The offline back-end, a rule-based reasoner for every role of the STA-CoT loop (see reasoner.py)."""
from __future__ import annotations

from .model_items import favourable_units, legend_informative, seen_again
from .reasoner import OfflineReasoner
from .settings import OfflineSettings

__all__ = ["OfflineReasoner", "OfflineSettings", "favourable_units", "legend_informative", "seen_again"]
