"""The omp driver: the omp TUI in the seat's PTY, observed through st2's channel extension
(``hooks/omp-channel.ts``, the same wire and consumer as pi's: :mod:`st2.drivers.pi.channel`).

omp has a hard launch gate by minor series (docs/drivers.md §omp): a patch inside an admitted minor costs
no new evidence, while what a number means is a property of a build, pinned by the fixture over
the capture of each build in :data:`MEASURED_CONTEXT_BUILDS` — every one of which the gate must
admit (a build measured but refused would be evidence for a version the fleet can never run).

- :mod:`.expansion` — the ``omp { … }`` driver block.
- :mod:`.screen` — the omp TUI composer (omp 18.2.3, a pi fork, ``captures/omp/18.2.3/screens/``).
- :mod:`.session` — ``st2 driver omp-session --identity I --runtime-id R -- omp …``: the omp
  wrapper.
"""

HARNESS = "omp"
SUPPORTED_OMP_MINORS = ("18.2",)
MEASURED_CONTEXT_BUILDS = ("18.2.3",)

# DING types notices into the omp TUI: the driver delivers nothing natively (docs/drivers.md §Delivery per harness).
OWNS_DELIVERY = False
