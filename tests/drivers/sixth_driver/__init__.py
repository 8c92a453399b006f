"""A test-only driver: the sixth harness that shows a new driver is one row of the table
(``st2.base.harnesses.DRIVERS``) and this one package. It declares the contract every driver package
declares (``st2.base.harnesses.CONTRACT``); its modules are stand-ins that say they ran."""

HARNESS = "sixth"
OWNS_DELIVERY = True
VERSION_GATE = "minor"
SUPPORTED_VERSIONS = ("6.0",)
MEASURED_VERSIONS = ("6.0.1",)
SESSION_OPTIONS = ("--operator",)
SCREEN_GRAMMAR = "Sixth"
SESSION_HELP = "Run `sixth …` (after --) as the seat's session."
CONFIG_ENV = None
