"""Resync latency: an accepted ``file:`` transition to the subscriber's inbox, over 627 seats with
two bindings each.

The catalog has SEATS running seats; each declares a stream ``changes``, two ``file:`` bindings
(``doc``, ``notes``) and two subscriptions: its own ``doc`` and the next seat's ``notes`` (so
1,254 subscriptions, half across seats). Every binding starts at revision 1 (its first accepted
result); the publisher (:mod:`st2.resync.publisher`, its real flush and worker threads, as
``st2 up`` runs it) first delivers those 1,254 events (``initial_ms``). Then, for CHANGES
rounds, one random ``file:`` document is rewritten and its new content is accepted the way the
resource host does it — the built-in ``file:`` observation (:func:`st2.resources.observers.
observe_file`) and one :func:`st2.resources.state.update` with the host's digest — while a
background writer accepts BACKGROUND other changes a second; the latency is from the rewrite to
the event (subject ``… is at revision <n>``) being in the subscriber's inbox. The provider's own
observation interval (how soon ``st2 up`` notices an edit) comes on top; it is the resource
host's figure, not this one. Anchor: the target p99 <= 1000 ms.
Usage: python benchmarks/resync.py [--seats N] [--changes N] [--background PER_SECOND] [--smoke]
(``--smoke``: 20 seats, 20 changes, 5 background changes a second.)
Last line: RESULT resync_p50_ms=<x> resync_p99_ms=<y> changes=<n> delivered=<d> initial_ms=<i>
seats=<s> bindings=<b> resync_p99_target_ratio=<y/1000>
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

HOST = "h"
TARGET_MS = 1000.0


def accept(seat_dir: Path, agent: str, binding: str, document: Path) -> int:
    """Observe ``document`` and accept the result into the binding's state record, as the resource
    host does; return the new revision."""
    from st2.resources import state
    from st2.resources.observers import observe_file

    facts = observe_file({"path": str(document)})
    now = time.time_ns() // 1_000_000
    digest = state.digest_facts(facts)

    def change(current):
        if current is not None and current.host_digest == digest:
            return None
        revision = 1 if current is None else current.revision + 1
        return state.State(agent, binding, f"file://{document}", 1, revision, digest, now, facts, None, now)

    return state.update(seat_dir, agent, binding, change, now).revision


def build(root: Path, seats: int) -> list[tuple[str, Path]]:
    catalog = root / "catalog"
    found = []
    for index in range(seats):
        identity = f"seat-{index:04d}"
        following = f"{HOST}.seat-{(index + 1) % seats:04d}"
        seat = catalog / "agents" / HOST / identity
        (seat / "resources" / "inbox").mkdir(parents=True)
        (seat / "resources" / "archive").mkdir(parents=True)
        documents = root / "documents" / identity
        documents.mkdir(parents=True)
        for name in ("doc", "notes"):
            (documents / f"{name}.md").write_text(f"{identity} {name} 0\n")
        (seat / "agent.kdl").write_text(
            f'agent "{identity}" {{\n    argv "sh"\n    stream "changes"\n'
            f'    resource "doc" uri="file://{documents}/doc.md"\n'
            f'    resource "notes" uri="file://{documents}/notes.md"\n'
            f'    subscribe "doc" stream="changes"\n'
            f'    subscribe "notes" stream="changes" agent="{following}"\n}}\n')
        found.append((identity, seat))
    return found


def subscriber_of(seats: list[tuple[str, Path]], index: int, binding: str) -> Path:
    """Whose inbox a change of seat ``index``'s ``binding`` lands in."""
    return seats[index][1] if binding == "doc" else seats[(index - 1) % len(seats)][1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seats", type=int, default=627)
    parser.add_argument("--changes", type=int, default=200)
    parser.add_argument("--background", type=float, default=20.0)
    parser.add_argument("--smoke", action="store_true")
    arguments = parser.parse_args()
    if arguments.smoke:
        arguments.seats, arguments.changes, arguments.background = 20, 20, 5.0
    base = Path(tempfile.mkdtemp(prefix="st2-resync-bench-", dir="/tmp"))
    os.environ["XDG_STATE_HOME"] = str(base / "state")
    from st2.bus.mailbox import list_inbox
    from st2.catalog.location import CatalogLocation
    from st2.resync.publisher import ResyncPublisher, entries_from_plans
    from st2.supervisor.catalog_view import read_catalog

    seats = build(base, arguments.seats)
    catalog = base / "catalog"
    documents = base / "documents"
    for identity, seat in seats:
        for name in ("doc", "notes"):
            accept(seat, f"{HOST}.{identity}", name, documents / identity / f"{name}.md")
    publisher = ResyncPublisher(catalog, HOST, poll_seconds=2.0).start()
    stop = threading.Event()
    lock = threading.Lock()  # one writer per document at a time (the resource host's own rule)
    try:
        started = time.monotonic()
        publisher.refresh(entries_from_plans(read_catalog(CatalogLocation(catalog, HOST)).plans))
        expected = 2 * len(seats)
        while sum(len(list_inbox(seat)) for _, seat in seats) < expected:
            if time.monotonic() - started > 600:
                raise SystemExit("the initial events did not all arrive within 600 s")
            time.sleep(0.05)
        initial_ms = (time.monotonic() - started) * 1000

        generator = random.Random(7)

        def rewrite(index: int, binding: str) -> int:
            identity, seat = seats[index]
            document = documents / identity / f"{binding}.md"
            with lock:
                document.write_text(f"{identity} {binding} {time.time_ns()}\n")
                return accept(seat, f"{HOST}.{identity}", binding, document)

        def background() -> None:
            other = random.Random(11)
            while not stop.wait(1.0 / arguments.background):
                rewrite(other.randrange(len(seats)), other.choice(("doc", "notes")))

        writer = threading.Thread(target=background, daemon=True)
        writer.start()
        latencies = []
        delivered = 0
        for _ in range(arguments.changes):
            index, binding = generator.randrange(len(seats)), generator.choice(("doc", "notes"))
            owner = f"{HOST}.{seats[index][0]}"
            inbox_owner = subscriber_of(seats, index, binding)
            begun = time.monotonic()
            revision = rewrite(index, binding)
            while time.monotonic() - begun < 10:
                # a later background change of the same binding supersedes it: that counts as arrived
                subjects = [message.subject for message in list_inbox(inbox_owner)]
                if any(s is not None and s.startswith(f"{binding} of {owner} is at revision ")
                       and int(s.rsplit(" ", 1)[1]) >= revision for s in subjects):
                    latencies.append((time.monotonic() - begun) * 1000)
                    delivered += 1
                    break
                time.sleep(0.002)
        stop.set()
        writer.join(timeout=5)
    finally:
        stop.set()
        publisher.stop()
    latencies.sort()
    p50 = statistics.median(latencies) if latencies else float("nan")
    p99 = latencies[min(len(latencies) - 1, int(round(0.99 * (len(latencies) - 1))))] if latencies else float("nan")
    print(f"{len(seats)} seats, {2 * len(seats)} bindings and subscriptions: initial events in {initial_ms:.0f} ms")
    print(f"accepted file: change -> subscriber inbox over {arguments.changes} changes "
          f"({arguments.background:g}/s in the background): p50 {p50:.1f} ms, p99 {p99:.1f} ms "
          f"(target p99 <= {TARGET_MS:.0f} ms, ratio {p99 / TARGET_MS:.3f}); delivered {delivered}")
    print(f"RESULT resync_p50_ms={p50:.1f} resync_p99_ms={p99:.1f} changes={arguments.changes} delivered={delivered} "
          f"initial_ms={initial_ms:.0f} seats={len(seats)} bindings={2 * len(seats)} "
          f"resync_p99_target_ratio={p99 / TARGET_MS:.3f}")
    import shutil

    shutil.rmtree(base, ignore_errors=True)
    return 0 if delivered == arguments.changes else 1


if __name__ == "__main__":
    sys.exit(main())
