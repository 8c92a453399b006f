"""Resync: each accepted transition of a resource binding published as a stream event into the
inbox of every seat subscribed to it (docs/resources.md §Resync).

- :mod:`.machine` — one subscription's publication state machine and the refusal classes.
- :mod:`.publisher` — capture and publication, on threads of their own beside the reconcile pass.
"""
