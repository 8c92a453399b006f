"""The bundled demo catalog: `shell` harness seats that need no model account."""
