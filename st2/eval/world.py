"""The eval's hermetic world: a fresh catalog and a private state home under one temp directory.

:func:`build` copies the spec's fixture folder into the catalog (its contents, with every ``_git``
directory renamed ``.git`` so a fixture can ship a real repository), declares each agent as
``agents/<host>/<identity>/agent.kdl`` (a relative ``workspace`` resolved inside the catalog),
declares the kickoff's sender as a principal with a mailbox, and judges the result with the one
catalog validator. The catalog itself is every task's ``ST_ROOT``: no nested bus directory is made.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from st2.eval.spec import Spec

FIXTURE_GIT = "_git"


class WorldRefused(Exception):
    """The world cannot be built; the message is one line."""


@dataclass(frozen=True)
class World:
    directory: Path   # the temp directory holding both
    catalog: Path
    state_home: Path  # XDG_STATE_HOME of every process the eval starts

    @property
    def marker(self) -> str:
        """The value of ``ST2_EVAL_RUN`` every process of this eval inherits."""
        return str(self.directory)


def make() -> World:
    # Short, under /tmp: tmux sockets live under the state home and sun_path holds 104 bytes.
    directory = Path(tempfile.mkdtemp(prefix="st2-eval-", dir="/tmp"))
    catalog, state_home = directory / "catalog", directory / "state"
    catalog.mkdir()
    state_home.mkdir()
    return World(directory=directory, catalog=catalog, state_home=state_home)


def copy_fixture(source: Path, destination: Path) -> None:
    """Copy ``source``'s contents into ``destination``, renaming every ``_git`` directory ``.git``.
    Symlinks are copied as links, never followed out of the fixture."""
    for entry in sorted(os.scandir(source), key=lambda item: item.name):
        name = ".git" if entry.name == FIXTURE_GIT and entry.is_dir(follow_symlinks=False) else entry.name
        target = destination / name
        if entry.is_symlink():
            os.symlink(os.readlink(entry.path), target)
        elif entry.is_dir():
            target.mkdir(exist_ok=True)
            copy_fixture(Path(entry.path), target)
        else:
            shutil.copy2(entry.path, target)


def build(spec: Spec, world: World) -> None:
    """Lay out ``spec``'s team in ``world.catalog``. Raise :class:`WorldRefused` (one line)."""
    import ckdl

    from st2.bus.principals import ensure_principal
    from st2.bus.publication import ensure_box, staging_directory
    from st2.catalog.layout import AGENTS_DIR, ARCHIVE, INBOX, RESOURCES
    from st2.fs.atomic import publish

    assert spec.eval is not None
    if spec.eval.copy is not None:
        source = (spec.folder / spec.eval.copy).resolve()
        if not source.is_dir():
            raise WorldRefused(f"{spec.path}: copy names {spec.eval.copy!r}, which is not a folder beside the spec")
        copy_fixture(source, world.catalog)
    staging = staging_directory(world.catalog)
    for agent in spec.agents:
        seat = world.catalog / AGENTS_DIR / spec.host / agent.identity
        if seat.exists():
            raise WorldRefused(f"the fixture already holds {seat.relative_to(world.catalog)}; "
                               f"agent `{agent.identity}` would replace it")
        ensure_box(seat / RESOURCES / INBOX, world.catalog)
        ensure_box(seat / RESOURCES / ARCHIVE, world.catalog)
        node = _resolved_workspace(agent.node, world.catalog)
        publish(seat / "agent.kdl", ckdl.Document(node).dump().encode(), staging, root=world.catalog)
    if spec.eval.message is not None:
        from st2.bus import BusError

        try:
            ensure_principal(world.catalog, spec.host, spec.eval.message.sender)
        except BusError as error:
            raise WorldRefused(f"the kickoff's sender cannot be declared: {error}") from None
    from st2.authoring.validation import validate_catalog

    errors = [diagnostic for diagnostic in validate_catalog(world.catalog, spec.host, state_dir=world.state_home / "st2")
              if diagnostic.is_error]
    if errors:
        raise WorldRefused(f"the eval's catalog does not validate: {errors[0].human()}")


def _resolved_workspace(node, catalog: Path):
    """``node`` with a relative ``workspace`` made absolute inside ``catalog`` (created if missing)."""
    import ckdl

    from st2.declarations.context import plain

    children = []
    for child in node.children:
        if child.name == "workspace" and child.args and isinstance(plain(child.args[0]), str):
            value = os.path.expanduser(plain(child.args[0]))
            if not os.path.isabs(value):
                resolved = (catalog / value).resolve()
                resolved.mkdir(parents=True, exist_ok=True)
                child = ckdl.Node(None, "workspace", str(resolved))
        children.append(child)
    return ckdl.Node(None, node.name, *node.args, children=children)


def remove(world: World) -> None:
    shutil.rmtree(world.directory, ignore_errors=True)
