"""The supervisor: lower seat declarations to tasks and keep exactly those running (docs/architecture.md §Flow: the supervisor pass)."""
