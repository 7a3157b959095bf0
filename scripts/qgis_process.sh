#!/usr/bin/env bash
# Run qgis_process headless with an isolated profile and this checkout installed as the `lodestar` plugin.
# Usage: scripts/qgis_process.sh run lodestar:analyze -- CASE=... (any qgis_process arguments)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${LODESTAR_QGIS_HOME:-$root/build/qgis}"
mkdir -p "$build/plugins" "$build/profile"
if [ "$(readlink "$build/plugins/lodestar" 2>/dev/null)" != "$root" ]; then  # two runs at once may both make it
  ln -sfn "$root" "$build/plugins/lodestar" 2>/dev/null || [ "$(readlink "$build/plugins/lodestar")" = "$root" ]
fi
site="$("$root/.venv/bin/python" -c 'import site; print(site.getsitepackages()[0])')"
export QT_QPA_PLATFORM=offscreen
export GDAL_PAM_ENABLED="${GDAL_PAM_ENABLED:-NO}"  # no .aux.xml statistics written beside the inputs
export QGIS_CUSTOM_CONFIG_PATH="$build/profile"
export QGIS_PLUGINPATH="$build/plugins"
export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}"
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$build/runtime}"
mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
qgis_process.bin plugins enable lodestar >/dev/null 2>&1 || true
exec qgis_process.bin "$@"
