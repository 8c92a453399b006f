"""The pi driver: the pi TUI in the seat's PTY, observed through st2's channel extension."""

HARNESS = "pi"
