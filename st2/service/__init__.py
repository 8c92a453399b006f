"""systemd integration: the user units rendered from ``units/`` and their installation."""
