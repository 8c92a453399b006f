"""The message bus: mail files in each seat's ``resources/inbox`` and ``resources/archive``.

A message is one immutable file ``<unix-ms>-<rand6>.md`` (front matter and a markdown body),
published atomically into the recipient's inbox. Reading it is moving it to the archive under the
same name; the archive file is the durable receipt that settles the message. Idempotent requests
and stream events reserve a deterministic filename per key before publishing, so concurrent or
crash-replayed publication yields exactly one message (docs/delivery.md §Exactly-once publication).

- :mod:`.filename` — the message filename grammar.
- :mod:`.envelope` — front matter and the hostile-input rules.
- :mod:`.publication` — exclusive atomic create.
- :mod:`.reservation` — deterministic reserved filenames for idempotent publication.
- :mod:`.mailbox` — list, read, archive receipts.
- :mod:`.boxes` — the name-only unread set and origin-timed activity the roster reads.
- :mod:`.addressing` — who a recipient names.
- :mod:`.seat_index` — the host-local index of a catalog's seats, so a send need not walk the catalog.
- :mod:`.send` — plain and idempotent sends.
- :mod:`.sent` — the sender's ledger.
- :mod:`.thread` — ``st2 message thread``: a message and everything replying to it.
- :mod:`.principals` — declared non-agent service principals as senders and recipients.
- :mod:`.request` — idempotent service requests and their replies.
- :mod:`.stream` — event ingress and its receipt ring.
- :mod:`.guide` — the agent-facing bus guide (``st2 message guide``).
"""

# The tag every stream event carries beside ``stream:<name>`` (:mod:`.stream`), here so DING's
# notice can tell stream work from mail without importing the publisher.
STREAM_TAG = "st2-stream"
STREAM_SENDER_PREFIX = "stream:"


class BusError(Exception):
    """A bus operation was refused; the message says why. Nothing was written unless stated."""


class AmbiguousRecipient(BusError):
    """A name matches more than one seat; the message names them."""
