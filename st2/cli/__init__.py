"""The click CLI. Each verb lives in its own module and is imported only when invoked, so
`st2 agents` does not pay for the supervisor, the bus or the usage poller.

- :mod:`.agent` — ``st2 agent …``: authoring one seat's declaration (parsing glue over
  :mod:`st2.authoring`).
- :mod:`.agents` — `st2 agents [--json] [--enrich] [--status S] [--identity HOST.IDENTITY] [--host
  HOST]`.
- :mod:`.attach` — ``st2 attach <identity>``: attach this terminal to a seat's tmux session.
- :mod:`.catalog` — ``st2 catalog …``: archive, unarchive and observe the catalog, and print the
  replication engine's rules.
- :mod:`.check` — ``st2 check``: checks over records other processes write.
- :mod:`.common` — options every catalog-reading verb shares.
- :mod:`.demo` — `st2 demo`: st2's main job on the bundled demo catalog (shell seats, no model
  account).
- :mod:`.ding` — `st2 ding <runtime-id>` / `st2 ding --identity NAME` — parsing glue over
  :func:`st2.ding.serve.serve`.
- :mod:`.resource_runtime` — `st2 resource-runtime SCHEME` — parsing glue over
  :func:`st2.resources.runtime.main`.
- :mod:`.ding_service` — `st2 ding-service --scope-directory DIR` — parsing glue over
  :class:`st2.ding.service.DingService`.
- :mod:`.doctor` — `st2 doctor`: print advisories and failures; exit non-zero only on a failure.
- :mod:`.eval` — ``st2 eval [--json] [--keep] [--host H] PATH``: run an eval spec and print its
  verdict (:mod:`st2.eval.run`).
- :mod:`.down` — ``st2 down [identity…]``: the only command that kills tasks.
- :mod:`.driver` — `st2 driver …`: harness wrappers and tools.
- :mod:`.emit` — ``st2 emit <document>``: the kit's emitting arms (exit 0 document, 2 refusal; never
  1).
- :mod:`.event` — ``st2 event emit`` — stream ingress (:mod:`st2.bus.stream`).
- :mod:`.events` — ``st2 events [--follow] [--since MS] [--host H] [--json]``.
- :mod:`.hook` — ``st2 hook …``: the harness hooks.
- :mod:`.kit` — the delegation kit's top-level verbs (``st2 model-verdict``, ``st2 foreign …``,
  ``st2 kit …``).
- :mod:`.ls` — `st2 ls [--json]`: the seats discovery finds, sorted by host and identity.
- :mod:`.message` — ``st2 message send|reply|ls|sent|read|archive|thread`` — parsing glue over
  :mod:`st2.bus`.
- :mod:`.record` — `st2 record show <identity> [--raw]` — an operator's and a test's view of a
  seat's four records.
- :mod:`.request` — ``st2 request send|read|reply|status`` — idempotent service requests
  (:mod:`st2.bus.request`).
- :mod:`.seat_host` — `st2 seat-host --scope-directory DIR` — parsing glue over
  :class:`st2.seathost.server.SeatHost`.
- :mod:`.service` — `st2 service install|render`: parsing glue for the systemd user units
  (st2.service.*).
- :mod:`.status` — `st2 status [identity] [--set offline|available|busy|away|dnd]` — parsing glue
  over :mod:`st2.records.status`.
- :mod:`.tasks` — ``st2 tasks [--json]``: the read-only task inventory.
- :mod:`.top` — ``st2 top [--once] [--host H] [--harness N] [--state S] [--text T] [--sort
  COLUMN]``.
- :mod:`.web` — ``st2 web [--listen HOST:PORT] [--cert F --key F] [--insecure-remote]``, ``st2 web
  pair`` and ``st2 web token metrics``: the fleet's web face (:mod:`st2.web`).
- :mod:`.metrics` — ``st2 metrics --textfile PATH``: write the fleet's Prometheus metrics once for
  node_exporter's textfile collector.
- :mod:`.unpark` — ``st2 unpark <runtime-id>``: recover exactly one parked task.
- :mod:`.up` — ``st2 up``: run the supervisor (parsing glue; the loop is
  :mod:`st2.supervisor.loop`).
- :mod:`.usage` — `st2 usage verdict|poll|trend`: parsing glue only.
- :mod:`.validate` — `st2 validate [--strict] [--json]`: every problem in the catalog, one
  diagnostic each.
"""

from __future__ import annotations

import importlib

import click

from st2.fs.errors import EXIT_OS_ERROR, os_error_line  # st2.cli.agent imports both from here

# verb -> "module:attribute" naming a click command or group. Keep one line per verb.
VERBS: dict[str, str] = {
    "up": "st2.cli.up:up",
    "down": "st2.cli.down:down",
    "tasks": "st2.cli.tasks:tasks",
    "unpark": "st2.cli.unpark:unpark",
    "attach": "st2.cli.attach:attach",
    "agent": "st2.cli.agent:agent",
    "agents": "st2.cli.agents:agents",
    "top": "st2.cli.top:top",
    "web": "st2.cli.web:web",
    "metrics": "st2.cli.metrics:metrics",
    "catalog": "st2.cli.catalog:catalog",
    "validate": "st2.cli.validate:validate",
    "ls": "st2.cli.ls:ls",
    "demo": "st2.cli.demo:demo",
    "eval": "st2.cli.eval:eval_command",
    "doctor": "st2.cli.doctor:doctor",
    "usage": "st2.cli.usage:usage",
    "status": "st2.cli.status:command",
    "record": "st2.cli.record:record",
    "message": "st2.cli.message:message",
    "request": "st2.cli.request:request",
    "event": "st2.cli.event:event",
    "events": "st2.cli.events:events",
    "check": "st2.cli.check:check",
    "emit": "st2.cli.emit:emit",
    "model-verdict": "st2.cli.kit:model_verdict",
    "foreign": "st2.cli.kit:foreign",
    "kit": "st2.cli.kit:kit",
    "service": "st2.cli.service:service",
    "driver": "st2.cli.driver:driver",
    "ding": "st2.cli.ding:ding",
    "ding-service": "st2.cli.ding_service:ding_service",
    "seat-host": "st2.cli.seat_host:seat_host",
    "resource-runtime": "st2.cli.resource_runtime:resource_runtime",
    "hook": "st2.cli.hook:hook",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(VERBS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        target = VERBS.get(name)
        if target is None:
            return None
        module_name, attribute = target.split(":")
        return getattr(importlib.import_module(module_name), attribute)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="st2", prog_name="st2", message="%(prog)s %(version)s")
@click.option("--catalog", envvar="CATALOG", default=None, help="Catalog root (default $CATALOG, then the XDG state default).")
@click.option("--host", default=None, help="Host name (default: the short hostname).")
@click.pass_context
def cli(ctx: click.Context, catalog: str | None, host: str | None) -> None:
    """st2 supervises a fleet of coding-agent seats declared in a file catalog."""
    ctx.obj = {"catalog": catalog, "host": host}


def run(words: list[str]) -> int:
    try:
        result = cli.main(args=words, prog_name="st2", standalone_mode=False)
    except click.exceptions.Exit as exit_:
        return int(exit_.exit_code or 0)
    except click.exceptions.NoArgsIsHelpError as bare:
        # `st2` or `st2 message` alone asks what there is: the help, on stdout, exit 0.
        click.echo(bare.ctx.get_help() if bare.ctx is not None else cli.get_help(click.Context(cli)))
        return 0
    except click.ClickException as error:
        error.show()
        return error.exit_code
    except click.exceptions.Abort:
        click.echo("Aborted!", err=True)
        return 1
    except OSError as error:  # never a traceback: one line naming what the machine refused
        click.echo(os_error_line(words, error), err=True)
        return EXIT_OS_ERROR
    return result if isinstance(result, int) else 0
