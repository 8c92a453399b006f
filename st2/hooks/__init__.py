"""Harness hooks: short-lived processes the harness spawns per event. Each is a hot path
(standard library and its own record module only), dispatched from ``st2.entry.HOT_PATHS``."""
