"""The omp driver: the omp TUI in the seat's PTY, observed through st2's channel extension."""

HARNESS = "omp"
