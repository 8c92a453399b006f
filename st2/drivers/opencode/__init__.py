"""The opencode driver: ``opencode serve`` driven natively by ``st2 driver opencode-session``."""

HARNESS = "opencode"
