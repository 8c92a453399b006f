"""The foreign-vendor run (seed 002 §The foreign-vendor run, §Resuming a session, §The keyed
verdict): one audit or sweep on another vendor's coding agent, in a throwaway clone, budgeted
by that vendor's own usage snapshot."""
