"""``skillbridge``: one verb per user job. A thin layer over the packages.

Each verb lives in its own module of this package (``skillbridge/cli/<verb>.py``) exposing
``register(app)``; helpers that several verbs share are in :mod:`skillbridge.cli.common`.

A command line names its verb, so :func:`run` imports that verb's module only (a verb's
module imports what it needs when it runs, and a process that plans pays for no other verb);
``--help``, no verb or an unknown one set up every verb. ``app`` seen from outside this
module (``from skillbridge.cli import app``) always has every verb.
"""

from __future__ import annotations

import inspect
import sys

import typer
from rich.console import Console

from skillbridge import __version__
from skillbridge.cli.common import SEED_MAX
from skillbridge.errors import UserError, plain, safe

_app = typer.Typer(
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


@_app.callback()
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
    "serve",
    "mcp",
)


_REGISTERED: set[str] = set()


def _register(verbs: tuple[str, ...] = VERBS) -> None:
    """Add the verbs not added yet, kept in :data:`VERBS` order (any other command, added
    by a test, after them)."""
    import importlib

    for verb in verbs:
        if verb not in _REGISTERED:
            importlib.import_module(f"skillbridge.cli.{verb}").register(_app)
            _REGISTERED.add(verb)
    # importing the ``run`` verb's module binds this package's ``run`` to it: the entry
    # point is the function below
    globals()["run"] = _entry
    order = {v.replace("_", "-"): i for i, v in enumerate(VERBS)}
    _app.registered_commands.sort(key=lambda c: order.get(c.name or "", len(order)))
    _bound_seeds()
    _literal_help()


def _verbs_for(argv: list[str]) -> tuple[str, ...]:
    """The verb modules a command line needs: its verb's, or every one (``--help`` or
    ``--version`` alone, no verb, a verb that is not one of ours)."""
    word = next((a for a in argv if not a.startswith("-")), None)
    verb = word.replace("-", "_") if word else None
    return (verb,) if verb in VERBS and "_" not in (word or "") else VERBS


def __getattr__(name: str):
    if name == "app":  # from outside: the whole CLI
        _register()
        return _app
    raise AttributeError(name)


#: Seeds go to numpy/gymnasium seeding, which refuses negatives deep inside a run.
SEED_RANGE = (0, SEED_MAX)
SEED_PARAMS = ("seed", "seed_base")


def _bound_seeds() -> None:
    """Give every verb's ``--seed``/``--seed-base`` the same range, so a negative seed is a
    usage error (exit 2) on every verb, present and future, before anything starts."""
    import inspect

    for cmd in _app.registered_commands:
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


def _wants_json(argv: list[str]) -> bool:
    """Whether this command line asks a verb that has ``--json`` for it (a flag before any
    ``--``): then stdout must be one JSON document, even when the command line is wrong."""
    args = argv[: argv.index("--")] if "--" in argv else argv
    if "--json" not in args:
        return False
    verb = next((a for a in args if not a.startswith("-")), None)
    group = typer.main.get_command(_app)
    cmd = group.commands.get(verb) if verb and hasattr(group, "commands") else None
    return cmd is not None and any("--json" in getattr(p, "opts", ()) for p in cmd.params)


class _Watched:
    """stdout, noting whether anything was written: a verb that printed its JSON result and
    then failed (``run --json`` whose video failed) must not print a second document."""

    def __init__(self, stream) -> None:
        self._stream = stream
        self.used = False

    def write(self, text: str) -> int:
        self.used = self.used or bool(text)
        return int(self._stream.write(text))

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def _json_error(message: str, code: int) -> None:
    """The error as a JSON document on stdout for ``--json`` callers (stderr keeps its line)."""
    import json

    out = sys.stdout
    if isinstance(out, _Watched) and not out.used:
        out.write(json.dumps({"error": plain(message), "exit_code": code}) + "\n")
        out.flush()


def _literal_help() -> None:
    """Make every verb's help and option help print as written: typer renders them as rich
    markup, where ``[x, y]`` is a tag and vanishes (``run --help`` once showed the
    ``--cubes`` pose forms as ``( |  | )``). Each text is escaped once."""
    from rich.markup import escape

    for cmd in _app.registered_commands:
        if cmd.callback is None or getattr(cmd.callback, "_literal_help", False):
            continue
        if cmd.help:
            cmd.help = escape(cmd.help)
        elif cmd.callback.__doc__:
            cmd.help = escape(inspect.cleandoc(cmd.callback.__doc__))
        for p in inspect.signature(cmd.callback).parameters.values():
            info = p.default
            if isinstance(info, typer.models.ParameterInfo) and info.help:
                info.help = escape(info.help)
        cmd.callback._literal_help = True  # type: ignore[attr-defined]


def run() -> None:
    """Entry point that turns UserError into one line on stderr and its exit code (and, for
    a ``--json`` command line, into a JSON document on stdout)."""
    _register(_verbs_for(sys.argv[1:]))
    real = sys.stdout
    if _wants_json(sys.argv[1:]):
        sys.stdout = _Watched(real)
    try:
        _run()
    finally:
        sys.stdout = real


_entry = run


def _run() -> None:
    try:
        # without standalone mode, typer *returns* the code of typer.Exit(n)
        code = _app(standalone_mode=False)
    except UserError as e:
        _json_error(str(e), e.code)
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
                line = _usage_line(e)
                _json_error(line.removeprefix("error: "), e.exit_code)
                err_console.print(safe(line), highlight=False)
            else:
                e.show()
            sys.exit(e.exit_code)
        raise
    sys.exit(code or 0)
