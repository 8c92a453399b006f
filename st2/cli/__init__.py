"""The click CLI. Each verb lives in its own module and is imported only when invoked, so
`st2 agents` does not pay for the supervisor, the bus or the usage poller."""

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
    "catalog": "st2.cli.catalog:catalog",
    "validate": "st2.cli.validate:validate",
    "ls": "st2.cli.ls:ls",
    "demo": "st2.cli.demo:demo",
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
