#!/bin/sh
# The type checker (mypy, settings in pyproject.toml) over the core (plugin/) and the back-ends (models/), with the
# checkout seen as the `lodestar` package, as the tests and QGIS see it.
set -e
cd "$(dirname "$0")/.."
mkdir -p build/typecheck
ln -sfn "$(pwd)" build/typecheck/lodestar
cd build/typecheck
MYPYPATH=. ../../.venv/bin/python -m mypy --config-file ../../pyproject.toml --cache-dir ../mypy-cache \
    -p lodestar.plugin -p lodestar.models
