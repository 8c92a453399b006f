"""systemd integration: the user units rendered from ``units/`` and their installation.

- :mod:`.install` — `st2 service install`: write the rendered user units where the user manager
  reads them.
- :mod:`.units` — the systemd user units, rendered from the one set of templates in ``units/``.
"""
