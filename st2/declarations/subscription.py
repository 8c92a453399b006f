"""``subscribe "<binding>" stream="<stream>" [agent="<owner>"]``: a seat's subscription to a
resource binding's transitions, judged without touching the catalog.

``binding`` is the binding's name on the owning seat: 1..63 characters of lowercase letters,
digits, ``.``, ``_`` and ``-``, starting with a letter or digit (the names a resource state record
can have). ``stream`` is the subscriber's own stream the transitions arrive on (1..64 characters,
no whitespace, ``/`` or ``..``). ``agent`` names the owning seat as a sender would (a bus id,
an identity or an address); without it the binding is the subscriber's own. Whether the owner
exists, is unique and lives on this host, and whether the stream is declared, is judged when a
transition is published (docs/resources.md §Resync), since the catalog may change in between.
"""

from __future__ import annotations

import re
from typing import Any

from st2.declarations import fields
from st2.declarations.context import NAME, Context, argument, plain, property_
from st2.declarations.model import Subscription

PROPERTIES = ("stream", "agent")
BINDING = re.compile(r"[a-z0-9][a-z0-9._-]{0,62}")
_NAME = re.compile(r"[^\s/]{1,64}")
HELP = 'write: subscribe "<binding>" stream="<stream>" agent="<owner>"'


def read_subscription(context: Context, node: Any, path: tuple[int, ...],
                      field_path: tuple[str, ...]) -> Subscription | None:
    """The node's :class:`~st2.declarations.model.Subscription`, or None (reported at its token)."""
    fields.no_children(context, node, path, field_path)
    binding = plain(node.args[0]) if node.args else None
    if len(node.args) != 1 or not isinstance(binding, str) or not BINDING.fullmatch(binding):
        context.report("subscription-invalid", path, argument(0) if node.args else NAME, field_path,
                       "a subscription needs one binding name: lowercase letters, digits, '.', '_', '-'", help=HELP)
        return None
    field_path = field_path + (binding,)
    if not fields.no_properties(context, node, path, field_path, PROPERTIES):
        return None
    values = {}
    for key in PROPERTIES:
        if key not in node.properties:
            continue
        value = plain(node.properties[key])
        if not isinstance(value, str) or not _NAME.fullmatch(value) or ".." in value:
            context.report("subscription-invalid", path, property_(key), field_path + (key,),
                           f"subscription \"{binding}\" `{key}` must be a name of 1..64 characters "
                           "without whitespace, '/' or '..'")
            return None
        values[key] = value
    if "stream" not in values:
        context.report("subscription-invalid", path, NAME, field_path,
                       f"subscription \"{binding}\" needs `stream`: the stream its transitions arrive on", help=HELP)
        return None
    return Subscription(binding=binding, stream=values["stream"], agent=values.get("agent"))
