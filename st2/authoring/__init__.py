"""Catalog authoring: every st2 write path that changes a declaration or moves a seat.

Each verb (``st2 agent publish|new|describe|address|stream|desired-state``, ``st2 catalog
archive|unarchive``) runs under the catalog authoring lock (``.st2/catalog-authoring.lock``),
reads ownership from the incumbent declaration through :mod:`st2.authoring.authority`, admits
the prospective catalog through the full-catalog gate (:mod:`st2.authoring.gate`), publishes
atomically and advances ``.st2/catalog-generation`` so a resident supervisor converges at once.
The CLI modules are parsing glue over these functions.
"""
