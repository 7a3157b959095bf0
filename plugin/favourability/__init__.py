"""Favourability surfaces: evidence memberships, knowledge-driven and data-driven weights, overlay."""
