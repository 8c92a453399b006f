"""Host-local runtime: launch records, process identity and the exec / tmux PTY backends.

Everything here lives under ``runtime_state_dir()``, scoped by catalog and host, so two catalogs
(or two hosts sharing a state directory) never see each other's tasks.
"""
