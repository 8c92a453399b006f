"""st2 — supervise a fleet of coding-agent seats declared in a file catalog."""

__version__ = "0.1.0"
