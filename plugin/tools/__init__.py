"""Executor tools: pure functions over a RasterSet that mark candidate zones (see result.ToolResult)."""
