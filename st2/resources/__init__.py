"""Resources: what a seat's ``resource`` bindings observe (docs/resources.md).

A binding's URI scheme selects a provider runtime; the host accepts each result through one
acceptance core and publishes one atomic state record per binding (:mod:`st2.resources.state`).

- :mod:`.state` — the state record: schema, reader (malformed reads absent), the one writer.

"""
