"""Helpers shared by several verbs: scene options, skill names, progress bars, worlds."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from skillbridge.errors import UserError

CUBES_JSON_LIMIT = 10_000  # characters; a scene of four cubes needs a few hundred


CUBES_EXAMPLE = "e.g. --cubes red,blue or --cubes '{\"red_block\": [0.1, 0.05]}'"


def no_duplicate_keys(pairs):
    keys = [k for k, _ in pairs]
    dup = sorted({k for k in keys if keys.count(k) > 1})
    if dup:
        raise UserError(f"--cubes names {', '.join(map(repr, dup))} twice", 2)
    return dict(pairs)


def parse_cubes(text: str | None):
    """``--cubes``: comma-separated names, a JSON list of names, or a JSON object of poses
    (checked by the runner). Duplicate keys are an error (JSON would keep the last one
    silently), and so is deep nesting (a RecursionError in the parser)."""
    if text is None:
        return None
    stripped = text.strip()
    if stripped.startswith(("{", "[")):
        if len(stripped) > CUBES_JSON_LIMIT:
            raise UserError(f"--cubes is longer than {CUBES_JSON_LIMIT} characters", 2)
        try:
            value = json.loads(stripped, object_pairs_hook=no_duplicate_keys)
        except RecursionError:
            raise UserError("--cubes is nested too deeply", 2) from None
        except ValueError as e:
            raise UserError(f"--cubes is not valid JSON: {e}", 2) from None
        if isinstance(value, list) and not all(isinstance(v, str) for v in value):
            raise UserError(f"--cubes as a JSON list must list cube names; {CUBES_EXAMPLE}", 2)
        if not value:
            raise UserError(f"--cubes lists no cube; {CUBES_EXAMPLE}", 2)
        return value
    names = [c.strip() for c in text.split(",") if c.strip()]
    if not names:
        raise UserError(f"--cubes lists no cube; {CUBES_EXAMPLE}", 2)
    return names


def exit_with(code: int) -> None:
    """Exit with ``code`` (SystemExit passes through the entry point unchanged, whereas
    typer.Exit is returned, not raised, by a non-standalone click app)."""
    if code:
        sys.exit(code)


LOG_LEVELS = ("debug", "info", "warning", "error")


def terminal_logging(level: str, console) -> None:
    if level.lower() not in LOG_LEVELS:
        raise UserError(f"--log-level must be one of {', '.join(LOG_LEVELS)}, not {level!r}", 2)
    from rich.logging import RichHandler

    root = logging.getLogger("skillbridge")
    for h in list(root.handlers):
        if getattr(h, "_skillbridge_terminal", False):
            root.removeHandler(h)
    h = RichHandler(console=console, show_path=False, show_time=False, markup=False)
    h.setFormatter(PlainFormatter())
    h.setLevel(getattr(logging, level.upper()))
    h._skillbridge_terminal = True  # type: ignore[attr-defined]
    root.addHandler(h)
    root.propagate = False


class PlainFormatter(logging.Formatter):
    """Log lines carry task and model text: escape control characters so a task holding
    ``\x1b]0;...`` cannot drive the terminal through a log line."""

    def format(self, record: logging.LogRecord) -> str:
        from skillbridge.errors import plain

        return plain(super().format(record))


console = Console()


#: Seeds are numpy/gymnasium seeds: non-negative and, to stay portable, 32-bit.
SEED_MAX = 2**32 - 1


def check_skill(skill: str, allow_chain: bool = False) -> None:
    from skills.chain import CHAIN
    from skills.registry import names

    valid = names() + ([CHAIN] if allow_chain else [])
    if skill not in valid:
        raise UserError(f"unknown skill {skill!r}; choose from {', '.join(valid)}")


def skill_names() -> tuple[str, ...]:
    from skills.registry import names

    return tuple(names())


def progress_bar(on: Console | None = None, *, transient: bool = False) -> Progress:
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=on or console,
        transient=transient,
    )


def scene_world(seed: int, world_file: Path | None):
    from skillbridge.errors import UserError

    if world_file is not None:
        from pydantic import ValidationError

        from sim.safeio import MiB, UnsafeFile, read_regular
        from sim.world import WorldState

        try:  # a regular file only: a FIFO would hang, /dev/zero would never end
            return WorldState.model_validate_json(read_regular(world_file, 16 * MiB))
        except UnsafeFile as e:
            raise UserError(f"world file {e}", 2) from None
        except OSError as e:
            raise UserError(f"cannot read world file {world_file}: {e.strerror}", 2) from None
        except (ValidationError, ValueError) as e:
            first = str(e).splitlines()[0]
            raise UserError(f"{world_file} is not a world state: {first}", 2) from None
    return reset_world(seed)


def reset_world(seed: int, options: dict | None = None):
    """The world state of a freshly reset scene (``options``: the env's reset options)."""
    import sim  # noqa: F401  (sets MUJOCO_GL before mujoco loads)
    from sim.env import TabletopEnv

    env = TabletopEnv()
    try:
        env.reset(seed=seed, options=options)
        return env.world_state()
    finally:
        env.close()
