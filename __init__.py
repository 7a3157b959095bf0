"""QGIS entry point of the Lodestar plugin."""


def classFactory(iface):  # noqa: N802 (QGIS API name)
    """Return the plugin instance; imported lazily so QGIS starts fast."""
    from .lodestar_plugin import LodestarPlugin

    return LodestarPlugin(iface)
