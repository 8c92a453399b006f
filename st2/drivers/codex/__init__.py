"""The Codex driver: ``codex app-server`` driven natively by ``st2 driver codex-session``."""

HARNESS = "codex"
