"""The omp driver: the omp TUI in the seat's PTY, observed through st2's channel extension
(``hooks/omp-channel.ts``, the same wire and consumer as pi's: :mod:`st2.drivers.channel`).

omp has a hard launch gate by minor series (docs/drivers.md §omp): a patch inside an admitted minor costs
no new evidence, while what a number means is a property of a build, pinned by the fixture over
the capture of each build in :data:`MEASURED_VERSIONS` — every one of which the gate must
admit (a build measured but refused would be evidence for a version the fleet can never run).
A refused build is the same ``versionGate`` driver-diagnostic and exit status every gate has
(:mod:`st2.drivers.version_gate`).

- :mod:`.session` — ``st2 driver omp-session``: the channel wrapper with omp's extension.
- :mod:`.expansion` — the ``omp { … }`` block (the channel block with omp's names).
- :mod:`.screen` — the omp TUI composer grammar DING reads.
"""

HARNESS = "omp"
VERSION_GATE = "minor"
SUPPORTED_VERSIONS = ("18.2",)
MEASURED_VERSIONS = ("18.2.3",)
SESSION_OPTIONS: tuple[str, ...] = ()
SCREEN_GRAMMAR = "Omp"

# DING types notices into the omp TUI: the driver delivers nothing natively (docs/drivers.md §Delivery per harness).
OWNS_DELIVERY = False
SESSION_HELP = "Run `omp …` (after --) in this PTY with st2's channel extension injected."
"""``st2 driver omp-session --help``'s summary."""
CONFIG_ENV = "PI_CODING_AGENT_DIR"
"""The variable naming the harness's own config location, which an account's ``config-dir`` sets:
omp 18.2.3 reads pi's variable for its agent directory: models, credentials and sessions
(tests/drivers/pi/test_account_move_lab.py)."""
