"""The supervisor: lower seat declarations to tasks and keep exactly those running (DESIGN.md §6)."""
