"""The message bus: mail files in each seat's ``resources/inbox`` and ``resources/archive``.

A message is one immutable file ``<unix-ms>-<rand6>.md`` (front matter and a markdown body),
published atomically into the recipient's inbox. Reading it is moving it to the archive under the
same name; the archive file is the durable receipt that settles the message. Idempotent requests
and stream events reserve a deterministic filename per key before publishing, so concurrent or
crash-replayed publication yields exactly one message (docs/delivery.md §Exactly-once publication).

Modules: :mod:`filename` (grammar), :mod:`envelope` (front matter, hostile-input rules),
:mod:`publication` (exclusive atomic create), :mod:`mailbox` (list, read, archive receipts),
:mod:`addressing` (who a recipient names), :mod:`send` (plain and idempotent sends),
:mod:`sent` (the sender's ledger), :mod:`thread`, :mod:`principals`, :mod:`request`,
:mod:`stream` (event ingress and its receipt ring), :mod:`boxes` (the name-only unread set and origin-timed activity the roster reads).
"""


class BusError(Exception):
    """A bus operation was refused; the message says why. Nothing was written unless stated."""


class AmbiguousRecipient(BusError):
    """A name matches more than one seat; the message names them."""
