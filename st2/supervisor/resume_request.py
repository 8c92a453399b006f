"""``st2 up --resume``: the seats ``st2 down`` stopped resume their recorded harness sessions.

``st2 down`` leaves a stop marker per task (:mod:`st2.runtime.resumable_session`) so the next
launch starts fresh; ``--resume`` removes the markers of the tasks it selects (``--agent`` /
``--task``, else all of this catalog's on this host) before the supervisor's first pass, so those
launches resume the recorded session as a crash's relaunch does.
"""

from __future__ import annotations

from st2.catalog.location import CatalogLocation
from st2.runtime import resumable_session


def resume_stopped(location: CatalogLocation, agent: str | None = None, task: str | None = None) -> list[str]:
    """Remove the selected stop markers; return the runtime ids whose marker was removed."""
    store = resumable_session.SessionStore.of(location.root, location.host)
    if agent is not None and not agent.startswith(f"{location.host}."):
        agent = f"{location.host}.{agent}"
    removed = []
    for runtime_id in resumable_session.stopped_ids(store):
        if task is not None and runtime_id != task:
            continue
        if agent is not None and runtime_id != agent and not runtime_id.startswith(agent + "."):
            continue
        if resumable_session.clear_stopped(store, runtime_id):
            removed.append(runtime_id)
    return removed
