"""Where everything lives in one catalog's host-local runtime. Every reader derives its paths here.

Host-local state sits under the runtime state directory (:func:`st2.catalog.layout.runtime_state_dir`,
``$XDG_STATE_HOME/st2``) and is never replicated::

    scopes/<catalog-digest>/<host>/          the runtime scope (:mod:`st2.runtime.scope`)
        scope.json                           names the catalog and host
        tasks/<runtime-id>.json              launch records
        parks/<runtime-id>.json              park markers
        unpark/<runtime-id>.json             unpark requests
        s/<runtime-id>                       tmux sockets (unless the catalog declares a pty-root)
        staging/                             staging for atomic publication in the scope
        stopped/<runtime-id>                 tombstones of removed launch records
        holds/<runtime-id>                   holds written by ``st2 down``
        supervisor.json                      the supervisor running the scope
        ding/<target>.json                   DING ownership records
        events/journal, journal.1,           the fleet event journal and its delivery state
              state.json, notify.log
        seat-host.sock, seat-host.lock       the seat host's socket and its lock
        ding-service.sock, .lock,            the DING service's socket, lock, start lock,
          .start.lock, .killed               and the record of its last kill
        ding-service/<target>.lock           one notifier per seat
        opencode/<runtime-id>/server.json    an opencode seat's server record (+ serve.log)
        codex/<runtime-id>/control-state.json  a codex seat's control state (+ app-server.stderr)
        delivery/<runtime-id>/delivery-ledger.json  where earlier builds kept the delivery ledger
        worktree-state/<runtime-id>.json     a seat's worktree as the supervisor last read it
        r/<runtime-id>                       a resource provider runtime's socket
        a/<runtime-id>                       a native wrapper's answer channel (owner-only socket:
                                             its pending human asks, and answers to them)
        accounts/<account>.json              an account's budget as the supervisor resolved it
                                             (st2.delivery.budget): what its hold judges
        admission/<account>.json             an account's recent starts and relaunch queue
                                             (st2.accounts.admission)
        asks/<runtime-id>.json, .answer.json a Claude seat's open permission ask and the answer
                                             `st2 web` gives it (st2.drivers.claude.permission)
        resource-runtimes/<runtime-id>.json  the generation the host gave each runtime registration
        resource-demand/<seat>/<binding>/    queued refresh demands (<seq>.json), their receipts
                                             (receipts/<seq>.json), the counter (next) and its lock
        resource-demand/bell                 republished after every admission: the host's one stat
        resource-proposals/<seat>/<binding>/ a file: binding's proposal intent (intent.json), its
                                             receipts (receipts/<proposal-id>.json) and its lock
    sessions/<catalog-digest>/<host>/        the session store (survives a reboot, unlike the scope)
        <runtime-id>.json, <runtime-id>.down,   resumable-session records, stop markers, their locks
          .<runtime-id>.json.lock
        staging/                             staging for atomic publication in the store
        delivery/<runtime-id>/delivery-ledger.json  delivery ledgers
        schedules/<runtime-id>.json          a seat's scheduled prompts: anchor, last fired, next run
        web/secret                           `st2 web`'s per-host secret (0600): signs sessions,
                                             pairing links and CSRF tokens
        web/paired/<nonce>                   one per pairing link used (a link works once)
        web/url                              the address the last `st2 web` served
        web/vapid-private.pem                this host's VAPID private key for Web Push (0600)
        web/subscriptions.json               the browsers' push subscriptions (+ its lock,
                                             web/.subscriptions.json.lock)
        web/push.log                         failed and dropped pushes, summaries (+ push.log.1)
    codex/<seat-key>/delivery-state.json     the one delivery record releases before the ledger kept
    opencode/<seat-key>/delivery-state.json  per native seat, read once (st2.delivery.legacy_state)
    cache/declarations.<catalog-digest>.json the declaration cache
    cache/seats.<catalog-digest>.json        the seat index
    cache/harness-builds.json                the version each harness build answered (st2.drivers.version_probe)
    channel/<runtime-id>.log                 a pi seat's extension channel diagnostics

Beside a repository a seat's ``worktree`` names (not under the state directory, and never in
the catalog)::

    <repository's parent>/<repository name>.st2-worktrees/<host>.<identity>/
                                             the seat's worktree when it declares no ``path``

One file is host-wide, outside the state directory, so that every environment of one user
(a systemd unit, a login shell, another ``XDG_STATE_HOME``) finds the same one::

    /tmp/.st2-boot-time-<uid>               this boot's id and the boot time every st2 process of
                                             the user reckons start times from (named and read in
                                             st2.process.proc_stat, below this table)

Nothing else in st2 spells these names (``tests/runtime/test_layout.py`` scans for them). The
functions take and return the caller's own paths (a ``Path`` gives ``Path``s). Standard library
only, and no pathlib import: hot paths import this.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: the paths below are the caller's own
    from pathlib import Path

# Under the runtime state directory.
SCOPES = "scopes"
SESSIONS = "sessions"
CACHE = "cache"
CHANNEL = "channel"

# In the runtime scope.
SCOPE_RECORD = "scope.json"
TASKS = "tasks"
PARKS = "parks"
UNPARK = "unpark"
SOCKETS = "s"
STAGING = "staging"              # also in the session store
STOPPED = "stopped"
HOLDS = "holds"
SUPERVISOR_RECORD = "supervisor.json"
DING_OWNERSHIP = "ding"
EVENTS = "events"
EVENTS_CURRENT = "journal"
EVENTS_PREVIOUS = "journal.1"
EVENTS_STATE = "state.json"
EVENTS_NOTIFY_LOG = "notify.log"
SEAT_HOST_SOCKET = "seat-host.sock"
SEAT_HOST_LOCK = "seat-host.lock"
DING_SERVICE_SOCKET = "ding-service.sock"
DING_SERVICE_LOCK = "ding-service.lock"
DING_SERVICE_START_LOCK = "ding-service.start.lock"
DING_SERVICE_KILLED = "ding-service.killed"
DING_SERVICE_SEAT_LOCKS = "ding-service"
OPENCODE = "opencode"
OPENCODE_SERVER_RECORD = "server.json"
OPENCODE_SERVE_LOG = "serve.log"
CODEX = "codex"
CODEX_CONTROL_RECORD = "control-state.json"
CODEX_APP_SERVER_STDERR = "app-server.stderr"
WORKTREE_STATE = "worktree-state"
RESOURCE_SOCKETS = "r"
ANSWER_SOCKETS = "a"
ACCOUNTS = "accounts"
ADMISSION = "admission"
ASKS = "asks"
RESOURCE_RUNTIMES = "resource-runtimes"
RESOURCE_DEMAND = "resource-demand"
RESOURCE_RECEIPTS = "receipts"
RESOURCE_DEMAND_COUNTER = "next"
RESOURCE_DEMAND_BELL = "bell"
RESOURCE_PROPOSALS = "resource-proposals"
RESOURCE_INTENT = "intent.json"

# Beside a repository.
WORKTREES_BESIDE = ".st2-worktrees"

# In the session store (and, from earlier builds, the scope).
DELIVERY = "delivery"

# Under the runtime state directory, from releases before the delivery ledger.
LEGACY_DELIVERY_STATE = "delivery-state.json"
DELIVERY_LEDGER = "delivery-ledger.json"
SCHEDULES = "schedules"
WEB = "web"
WEB_SECRET = "secret"
WEB_PAIRED = "paired"
WEB_URL = "url"
WEB_VAPID_PRIVATE = "vapid-private.pem"
WEB_SUBSCRIPTIONS = "subscriptions.json"
WEB_PUSH_LOG = "push.log"

# Host-wide, one per user: named where it is read, in st2.process, below this table (st2.process
# may import nothing of st2.runtime), and listed here with every other host-local name.
from st2.process.proc_stat import BOOT_TIME  # noqa: E402

NAMES: tuple[str, ...] = (
    SCOPES, SESSIONS, CACHE, CHANNEL, SCOPE_RECORD, TASKS, PARKS, UNPARK, SOCKETS, STAGING, STOPPED, HOLDS,
    SUPERVISOR_RECORD, DING_OWNERSHIP, EVENTS, EVENTS_CURRENT, EVENTS_PREVIOUS, EVENTS_STATE, EVENTS_NOTIFY_LOG,
    SEAT_HOST_SOCKET, SEAT_HOST_LOCK, DING_SERVICE_SOCKET, DING_SERVICE_LOCK, DING_SERVICE_START_LOCK,
    DING_SERVICE_KILLED, DING_SERVICE_SEAT_LOCKS, OPENCODE, OPENCODE_SERVER_RECORD, OPENCODE_SERVE_LOG, CODEX,
    CODEX_CONTROL_RECORD, CODEX_APP_SERVER_STDERR, DELIVERY, DELIVERY_LEDGER, WORKTREE_STATE, WORKTREES_BESIDE,
    RESOURCE_SOCKETS, RESOURCE_RUNTIMES, RESOURCE_DEMAND, RESOURCE_RECEIPTS, RESOURCE_DEMAND_COUNTER,
    RESOURCE_PROPOSALS, RESOURCE_INTENT, RESOURCE_DEMAND_BELL, BOOT_TIME,
    SCHEDULES, LEGACY_DELIVERY_STATE, WEB, WEB_SECRET, WEB_PAIRED, WEB_URL, WEB_VAPID_PRIVATE, WEB_SUBSCRIPTIONS,
    WEB_PUSH_LOG, ANSWER_SOCKETS,
)
"""Every name above: what ``tests/runtime/test_layout.py`` looks for outside this module."""


# The runtime state directory's children.
def scopes(state: Path) -> Path:
    return state / SCOPES


def declaration_cache(state: Path, digest: str) -> Path:
    return state / CACHE / f"declarations.{digest}.json"


def seat_index(state: str, digest: str) -> str:
    """The seat index, as text (its readers keep the caller's kind of path)."""
    return os.path.join(state, CACHE, f"seats.{digest}.json")


def harness_builds(state: Path) -> Path:
    return state / CACHE / "harness-builds.json"


def channel_log(state: Path, runtime_id: str) -> Path:
    return state / CHANNEL / f"{runtime_id}.log"


def answer_socket(scope: Path, runtime_id: str) -> Path:
    """A native wrapper's answer channel (:mod:`st2.drivers.answer_channel`)."""
    return scope / ANSWER_SOCKETS / runtime_id


def account_budget(scope, account: str):
    """An account's budget record: what its delivery hold judges (st2.delivery.budget)."""
    return os.path.join(scope, ACCOUNTS, account + ".json") if isinstance(scope, str) else scope / ACCOUNTS / f"{account}.json"


def account_admission(scope, account: str):
    """An account's admission record: its recent starts and relaunch queue (st2.accounts.admission)."""
    return (os.path.join(scope, ADMISSION, account + ".json") if isinstance(scope, str)
            else scope / ADMISSION / f"{account}.json")


def asks(scope: Path) -> Path:
    """Claude seats' open permission asks and their answers."""
    return scope / ASKS


def web(store: Path) -> Path:
    """`st2 web`'s host-local directory in the session store ``store``."""
    return store / WEB


def web_secret(store: Path) -> Path:
    return store / WEB / WEB_SECRET


def web_paired(store: Path) -> Path:
    return store / WEB / WEB_PAIRED


def web_url(store: Path) -> Path:
    return store / WEB / WEB_URL


def web_vapid_private(store: Path) -> Path:
    return store / WEB / WEB_VAPID_PRIVATE


def web_subscriptions(store: Path) -> Path:
    return store / WEB / WEB_SUBSCRIPTIONS


def web_push_log(store: Path) -> Path:
    return store / WEB / WEB_PUSH_LOG


def session_store(scope: Path) -> Path:
    """The session store beside the scope directory ``<state>/scopes/<digest>/<host>``:
    ``<state>/sessions/<digest>/<host>``."""
    return scope.parent.parent.parent / SESSIONS / scope.parent.name / scope.name


# The runtime scope's files, from its directory.
def scope_record(scope: Path) -> Path:
    return scope / SCOPE_RECORD


def tasks(scope: Path) -> Path:
    return scope / TASKS


def parks(scope: Path) -> Path:
    return scope / PARKS


def unpark_requests(scope: Path) -> Path:
    return scope / UNPARK


def sockets(scope: Path) -> Path:
    return scope / SOCKETS


def staging(directory: Path) -> Path:
    """The staging directory of the scope or of the session store ``directory``."""
    return directory / STAGING


def stopped(scope: Path, runtime_id: str) -> Path:
    return scope / STOPPED / runtime_id


def holds(scope: Path) -> Path:
    return scope / HOLDS


def supervisor_record(scope: Path) -> Path:
    return scope / SUPERVISOR_RECORD


def ding_ownership(scope: Path) -> Path:
    return scope / DING_OWNERSHIP


def events(scope: Path) -> Path:
    return scope / EVENTS


def seat_host_socket(scope: Path) -> Path:
    return scope / SEAT_HOST_SOCKET


def seat_host_lock(scope: Path) -> Path:
    return scope / SEAT_HOST_LOCK


def ding_service_socket(scope: Path) -> Path:
    return scope / DING_SERVICE_SOCKET


def ding_service_lock(scope: Path) -> Path:
    return scope / DING_SERVICE_LOCK


def ding_service_start_lock(scope: Path) -> Path:
    return scope / DING_SERVICE_START_LOCK


def ding_service_killed(scope: Path) -> Path:
    return scope / DING_SERVICE_KILLED


def ding_service_seat_lock(scope: Path, target: str) -> Path:
    return scope / DING_SERVICE_SEAT_LOCKS / f"{target}.lock"


def opencode_server_record(scope: Path, runtime_id: str) -> Path:
    return scope / OPENCODE / runtime_id / OPENCODE_SERVER_RECORD


def opencode_serve_log(server_record: Path) -> Path:
    return server_record.parent / OPENCODE_SERVE_LOG


def codex_control_record(scope: Path, runtime_id: str) -> Path:
    return scope / CODEX / runtime_id / CODEX_CONTROL_RECORD


def codex_app_server_stderr(control_record: Path) -> Path:
    return control_record.parent / CODEX_APP_SERVER_STDERR


def worktree_state(scope: Path, runtime_id: str) -> Path:
    return scope / WORKTREE_STATE / f"{runtime_id}.json"


def resource_sockets(scope: Path) -> Path:
    return scope / RESOURCE_SOCKETS


def resource_socket(scope: Path, runtime_id: str) -> Path:
    return scope / RESOURCE_SOCKETS / runtime_id


def resource_runtime(scope: Path, runtime_id: str) -> Path:
    return scope / RESOURCE_RUNTIMES / f"{runtime_id}.json"


def resource_demand(scope: Path, agent: str, binding: str) -> Path:
    """``resource-demand/<host>.<identity>/<binding>``: one binding's demand queue."""
    return scope / RESOURCE_DEMAND / agent / binding


def resource_demand_bell(scope: Path) -> Path:
    return scope / RESOURCE_DEMAND / RESOURCE_DEMAND_BELL


def resource_demand_counter(queue: Path) -> Path:
    return queue / RESOURCE_DEMAND_COUNTER


def resource_receipts(queue: Path) -> Path:
    """The receipts beside a demand queue or a proposal directory."""
    return queue / RESOURCE_RECEIPTS


def resource_proposals(scope: Path, agent: str, binding: str) -> Path:
    return scope / RESOURCE_PROPOSALS / agent / binding


def resource_intent(proposals: Path) -> Path:
    return proposals / RESOURCE_INTENT


def default_worktree(repository: str, runtime_id: str) -> str:
    """Where a seat's worktree of ``repository`` (an absolute path, as text) lives when it
    declares no ``path``: ``<parent>/<name>.st2-worktrees/<runtime-id>``, host-local beside
    the repository, outside every catalog."""
    repository = repository.rstrip("/") or "/"
    parent, name = os.path.split(repository)
    return os.path.join(parent, name + WORKTREES_BESIDE, runtime_id)


# The session store's files, from its directory.
def session_record(store: Path, runtime_id: str) -> Path:
    return store / f"{runtime_id}.json"


def session_stop_marker(store: Path, runtime_id: str) -> Path:
    return store / f"{runtime_id}.down"


def session_lock(store: Path, runtime_id: str) -> Path:
    return store / f".{runtime_id}.json.lock"


def delivery_ledger(directory: Path, runtime_id: str) -> Path:
    """``<directory>/delivery/<runtime-id>/delivery-ledger.json``: in the session store where the
    ledger lives, or in the scope where earlier builds left it."""
    return directory / DELIVERY / runtime_id / DELIVERY_LEDGER


def legacy_delivery_state(scope: Path, harness: str, seat_key: str) -> Path:
    """``<state>/<harness>/<seat-key>/delivery-state.json`` in the runtime state directory the
    scope ``<state>/scopes/<digest>/<host>`` sits in: where a release before the delivery ledger
    kept a native seat's one delivery record (``harness`` is ``codex`` or ``opencode``;
    ``seat_key`` is :func:`st2.delivery.legacy_state.seat_key`)."""
    return scope.parent.parent.parent / harness / seat_key / LEGACY_DELIVERY_STATE


def schedule_state(store: Path, runtime_id: str) -> Path:
    """``<store>/schedules/<runtime-id>.json``: in the session store, so a reboot keeps when each
    schedule last fired (:mod:`st2.schedule.state`)."""
    return store / SCHEDULES / f"{runtime_id}.json"
