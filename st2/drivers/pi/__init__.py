"""The pi driver: the pi TUI in the seat's PTY, observed through st2's channel extension.

- :mod:`.session` — ``st2 driver pi-session``: the channel wrapper
  (:mod:`st2.drivers.channel.session`, shared with omp) that injects ``hooks/pi-channel.ts`` with
  ``-e`` and reads its frames from an inherited pipe (:mod:`st2.drivers.channel.frames`).
- :mod:`.expansion` — the ``pi { … }`` block's argv (:mod:`st2.drivers.channel.expansion`).
- :mod:`.screen` — the pi TUI composer grammar DING reads.
- ``st2 driver pi replay`` is :mod:`st2.drivers.channel.replay`: captured frames through the same
  consumer.

pi has no runtime version gate (docs/drivers.md §pi): what its numbers mean is pinned by the fixture over
the capture of :data:`MEASURED_VERSIONS`' one build, which is the build the lab installs and the extension smoke
type-checks and runs against (tests pin the three to one literal).
"""

HARNESS = "pi"
MEASURED_VERSIONS = ("0.73.1",)

# DING types notices into the pi TUI: the driver delivers nothing natively (docs/drivers.md §Delivery per harness).
OWNS_DELIVERY = False
VERSION_GATE = None
SUPPORTED_VERSIONS: tuple[str, ...] = ()
SESSION_OPTIONS: tuple[str, ...] = ()
SCREEN_GRAMMAR = "Pi"
SESSION_HELP = "Run `pi …` (after --) in this PTY with st2's channel extension injected."
"""``st2 driver pi-session --help``'s summary."""
CONFIG_ENV = "PI_CODING_AGENT_DIR"
"""The variable naming the harness's own config location, which an account's ``config-dir`` sets
(its auth.json, settings and sessions)."""
