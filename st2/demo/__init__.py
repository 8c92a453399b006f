"""The bundled demo catalog: `shell` harness seats that need no model account.

- :mod:`.run` — `st2 demo`: st2's main job on the bundled demo catalog, shown step by step.
"""
