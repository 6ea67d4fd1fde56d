"""``skillbridge``: one verb per user job. A thin layer over the packages.

Each verb lives in its own module of this package (``skillbridge/cli/<verb>.py``) exposing
``register(app)``; helpers that several verbs share are in :mod:`skillbridge.cli.common`.
"""

from __future__ import annotations

import sys

import typer
from rich.console import Console

from skillbridge import __version__
from skillbridge.cli.common import SEED_MAX
from skillbridge.errors import UserError, plain, safe

app = typer.Typer(
    name="skillbridge",
    help="A language-model planner over reinforcement-learning skills in a MuJoCo tabletop.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
err_console = Console(stderr=True, soft_wrap=True)  # one error, one line


def _version(value: bool):
    if value:
        typer.echo(f"skillbridge {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
):
    """Run natural-language tasks, train skills, replay episodes."""


#: One module per verb, in the order ``--help`` lists them.
VERBS = (
    "run",
    "replay",
    "plan",
    "train",
    "eval_skill",
    "skills",
    "train_planner",
    "validate",
    "schema",
    "eval",
    "demo",
    "export",
    "view",
)


def _register_all() -> None:
    import importlib

    for verb in VERBS:
        importlib.import_module(f"skillbridge.cli.{verb}").register(app)


#: Seeds go to numpy/gymnasium seeding, which refuses negatives deep inside a run.
SEED_RANGE = (0, SEED_MAX)
SEED_PARAMS = ("seed", "seed_base")


def _bound_seeds() -> None:
    """Give every verb's ``--seed``/``--seed-base`` the same range, so a negative seed is a
    usage error (exit 2) on every verb, present and future, before anything starts."""
    import inspect

    for cmd in app.registered_commands:
        if cmd.callback is None:
            continue
        for name, p in inspect.signature(cmd.callback).parameters.items():
            info = p.default
            if name in SEED_PARAMS and isinstance(info, typer.models.OptionInfo):
                info.min, info.max = SEED_RANGE


def _usage_line(e) -> str:
    """A click usage error as one line (click prints usage, a hint and the error on three)."""
    msg = plain(e.format_message())
    ctx = getattr(e, "ctx", None)
    where = ctx.command_path if ctx is not None else "skillbridge"
    return f"error: {msg} (see '{plain(where)} --help')"


_register_all()
_bound_seeds()


def run() -> None:
    """Entry point that turns UserError into one line on stderr and its exit code."""
    try:
        # without standalone mode, typer *returns* the code of typer.Exit(n)
        code = app(standalone_mode=False)
    except UserError as e:
        err_console.print(f"[red]error:[/red] {safe(e)}", highlight=False)
        sys.exit(e.code)
    except typer.Exit as e:
        sys.exit(e.exit_code)
    except typer.Abort:
        err_console.print("aborted")
        sys.exit(130)
    except KeyboardInterrupt:
        err_console.print("interrupted")
        sys.exit(130)
    except Exception as e:
        # click's usage errors (typer vendors click, so match by behaviour, not by class)
        if hasattr(e, "show") and hasattr(e, "exit_code"):
            if hasattr(e, "format_message") and type(e).__name__ != "NoArgsIsHelpError":
                err_console.print(safe(_usage_line(e)), highlight=False)
            else:
                e.show()
            sys.exit(e.exit_code)
        raise
    sys.exit(code or 0)
