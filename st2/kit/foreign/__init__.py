"""The foreign-vendor run (docs/kit.md §Foreign run, docs/kit.md §Resuming a session,
docs/kit.md §Keyed verdict): one audit or sweep on another vendor's coding agent, in a throwaway clone, budgeted
by that vendor's own usage snapshot."""
