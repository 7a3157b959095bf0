#!/usr/bin/env bash
# Idempotent developer set-up: Debian QGIS packages, .venv on the QGIS Python, pinned requirements.
set -euo pipefail
cd "$(dirname "$0")/.."

QGIS_PY=/usr/bin/python3
DEB_PACKAGES="qgis python3-qgis qgis-providers python3-rasterio python3-geopandas python3-shapely \
python3-networkx python3-pyproj python3-scipy python3-matplotlib python3-sklearn python3-dask \
python3-distributed python3-venv xvfb tesseract-ocr"

missing=""
for pkg in $DEB_PACKAGES; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing="$missing $pkg"
done
if [ -n "$missing" ]; then
  if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    echo "setup: installing Debian packages:$missing"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
  else
    cat >&2 <<MSG
setup: these packages are missing:$missing
Lodestar's reference platform is Debian 12 with QGIS 3.22 from Debian. Either run this as root on
Debian/Ubuntu (it installs them with apt-get), or, with your own QGIS, create the virtual environment
yourself from the Python that QGIS uses:
    <qgis-python> -m venv --system-site-packages .venv
    .venv/bin/pip install -r requirements.txt -r requirements-dev.txt
and make sure rasterio, geopandas, shapely, networkx, pyproj, scipy, dask and distributed import in QGIS's
Python.
MSG
    exit 1
  fi
fi

stamp=.venv/.lodestar-setup
want="$(cat requirements.txt requirements-dev.txt requirements-torch.txt | sha1sum | cut -c1-12)"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
[ -x .venv/bin/python ] || "$QGIS_PY" -m venv --system-site-packages .venv
PIP=".venv/bin/python -m pip"
$PIP install -q -c constraints.txt -r requirements.txt -r requirements-dev.txt
# torch: the registry's CPU-capable pair (the machine's local torch wheel has no matching torchvision).
$PIP --isolated install -q -c constraints.txt -r requirements-torch.txt
.venv/bin/python -c "import numpy, sys; sys.exit(0 if int(numpy.__version__.split('.')[0]) < 2 else 'numpy >= 2 breaks QGIS GDAL bindings')"
echo "$want" > "$stamp"
echo "setup: .venv ready"
