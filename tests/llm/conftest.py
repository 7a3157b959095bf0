"""The real-model-server tests run only under `make test-llm` (scripts/test_llm.sh), which starts llama.cpp's server
and sets LODESTAR_LLM_URL; the normal suite does not collect them (no skips)."""
from __future__ import annotations

import os

collect_ignore = [] if os.environ.get("LODESTAR_LLM_URL") else ["test_real_server.py"]
