"""Helpers shared by several verbs: scene options, skill names, progress bars, worlds."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console

from skillbridge.errors import UserError

if TYPE_CHECKING:
    from rich.progress import Progress

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
    # imported here: only the verbs that show a bar pay for it (not --help, not plan)
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

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
            world = WorldState.model_validate_json(read_regular(world_file, 16 * MiB))
        except UnsafeFile as e:
            raise UserError(f"world file {e}", 2) from None
        except OSError as e:
            raise UserError(f"cannot read world file {world_file}: {e.strerror}", 2) from None
        except (ValidationError, ValueError) as e:
            first = str(e).splitlines()[0]
            raise UserError(f"{world_file} is not a world state: {first}", 2) from None
        from sim import objects

        for o in world.objects:  # geometry comes from the objects' specs
            try:
                objects.spec(o.name)
            except KeyError as e:
                raise UserError(f"{world_file}: {e.args[0]}", 2) from None
        return world
    return reset_world(seed)


def reset_world(seed: int, options: dict | None = None, model: str = "tabletop"):
    """The world state of a freshly reset scene (``options``: the env's reset options), as
    the runner starts an episode from it (reset, then a forward pass)."""
    import mujoco

    import sim  # noqa: F401  (sets MUJOCO_GL before mujoco loads)
    from sim.env import TabletopEnv

    env = TabletopEnv(scene=model)
    try:
        env.reset(seed=seed, options=options)
        mujoco.mj_forward(env.model, env.data)
        return env.world_state()
    finally:
        env.close()


# ----------------------------------------------------------------------------- scenes
#: The scene options of ``plan`` and ``run`` (docs/CLI_SCENES.md has the long form).
CUBES_HELP = (
    "Cubes in the scene, comma-separated: a name (red or red_block) is placed at random; "
    "NAME@PLACE puts it in a bin (red@green_bin), on another cube (blue@red), at a table "
    "region, side by side with others there (green@table_left), or in the drawer "
    "(yellow@drawer, articulated scene). Or JSON poses in metres and radians: "
    '\'{"red": [0.1, 0.05], "blue": "green_bin", "green": null}\' with a pose of 2, 3 or 4 '
    "numbers (x, y, yaw or x, y, z, yaw), a place, or null for a random place. "
    "Default: all four cubes at random. More in docs/CLI_SCENES.md."
)
SCENE_HELP = (
    "Scene: tabletop (default), articulated (adds a drawer, a button and a lamp) or mixed "
    "(two cube sizes, a cylinder and a ball)."
)
DRAWER_HELP = (
    "Articulated scene: the drawer at the start: open, shut (default) or how far it is "
    "pulled out in metres (0 to 0.15, open from 0.12)."
)
LIGHT_HELP = "Articulated scene: the light at the start: on or off (default)."
SCENE_FILE_HELP = (
    "A YAML or JSON file with the scene's fields: scene (or model), cubes (a list like "
    "--cubes, or a mapping of name to pose or place), drawer, light; a suite task's scene "
    "block works as it is. Flags given beside it win."
)
#: ``--drawer`` words; a number is the opening in metres.
DRAWER_WORDS = {"open": 0.15, "shut": 0.0, "closed": 0.0}
#: ``--light`` words.
LIGHT_WORDS = {"on": True, "off": False}
#: The keys of a ``--scene-file`` (a suite task's ``scene:``; ``scene`` is ``model``).
SCENE_FILE_KEYS = ("model", "scene", "cubes", "drawer", "light")
SCENE_FILE_LIMIT = 1 << 20  # bytes; a scene of four cubes is a few lines


def parse_drawer(value: object) -> float | None:
    """``--drawer``: open, shut (or closed), or the opening in metres; None: not given."""
    from sim import scene

    if value is None:
        return None
    travel = scene.DRAWER_TRAVEL
    word = str(value).strip().lower()
    if word in DRAWER_WORDS:
        return min(DRAWER_WORDS[word], travel)
    try:
        metres = float(word) if not isinstance(value, bool) else float("nan")
    except ValueError:
        metres = float("nan")
    if not 0.0 <= metres <= travel:  # also NaN, inf and words
        raise UserError(
            f"--drawer must be open, shut or an opening in metres from 0 to {travel:g}, "
            f"not {value!r}",
            2,
        )
    return metres


def parse_light(value: object) -> bool | None:
    """``--light``: on or off (a scene file's YAML may also say true or false)."""
    if value is None or isinstance(value, bool):
        return value
    word = str(value).strip().lower()
    if word not in LIGHT_WORDS:
        raise UserError(f"--light must be on or off, not {value!r}", 2)
    return LIGHT_WORDS[word]


def read_scene_file(path: Path) -> dict:
    """The fields of a ``--scene-file``: a YAML (or JSON) mapping of SCENE_FILE_KEYS."""
    from sim.safeio import UnsafeFile, read_regular
    from sim.safeyaml import YamlError, load

    try:  # a regular file only: a FIFO would hang, /dev/zero would never end
        text = read_regular(path, SCENE_FILE_LIMIT).decode("utf-8")
    except FileNotFoundError:
        raise UserError(f"--scene-file {path}: no such file", 2) from None
    except UnsafeFile as e:
        raise UserError(f"--scene-file {e}", 2) from None
    except OSError as e:
        raise UserError(f"--scene-file {path}: cannot read it: {e.strerror}", 2) from None
    except UnicodeDecodeError:
        raise UserError(f"--scene-file {path}: not UTF-8 text", 2) from None
    try:
        data = load(text)
    except YamlError as e:
        raise UserError(f"--scene-file {path}: not valid YAML or JSON: {e}", 2) from None
    if not isinstance(data, dict):
        raise UserError(
            f"--scene-file {path}: expected a mapping of {', '.join(SCENE_FILE_KEYS[1:])}, "
            f"found {type(data).__name__}",
            2,
        )
    unknown = [str(k) for k in data if k not in SCENE_FILE_KEYS]
    if unknown:
        raise UserError(
            f"--scene-file {path}: unknown key(s) {', '.join(unknown)}; a scene file has "
            f"{', '.join(SCENE_FILE_KEYS[1:])}",
            2,
        )
    if "model" in data and "scene" in data:
        raise UserError(f"--scene-file {path}: model and scene say the same; give one", 2)
    if "model" in data:
        data["scene"] = data.pop("model")
    return data


def build_scene(
    *,
    seed: int,
    scene: str | None = None,
    cubes: str | None = None,
    drawer: str | None = None,
    light: str | None = None,
    scene_file: Path | None = None,
):
    """The scene of ``plan`` and ``run``, one function for both so the same flags build the
    same world: a :class:`skillbridge.evaluation.suite.SceneSpec` (the suite's own scene, and
    its reset options). Flags override the scene file's fields; places in ``--cubes``
    (``red@green_bin``) become poses here (:func:`sim.cubes.place_cubes`), the random cube
    under a stack drawn from ``seed``. A bad value is a UserError, exit 2, one line."""
    from pydantic import ValidationError

    from sim import scenes
    from sim.cubes import check_cubes, place_cubes
    from sim.scene import SCENE_NAMES
    from skillbridge.evaluation.suite import SceneSpec

    fields = read_scene_file(scene_file) if scene_file is not None else {}
    given = {"scene": scene, "cubes": parse_cubes(cubes), "drawer": drawer, "light": light}
    fields.update({k: v for k, v in given.items() if v is not None})
    model = fields.get("scene", "tabletop")
    if model not in SCENE_NAMES:
        raise UserError(f"--scene must be one of {', '.join(SCENE_NAMES)}, not {model!r}", 2)
    opening, lit = parse_drawer(fields.get("drawer")), parse_light(fields.get("light"))
    if not scenes.get(model).articulated and (opening is not None or lit is not None):
        raise UserError(
            "--drawer and --light set up the articulated scene's drawer and lamp; "
            "add --scene articulated",
            2,
        )
    spec = fields.get("cubes")
    if isinstance(spec, str):  # a scene file's `cubes: red@green_bin, blue` as on the command line
        spec = parse_cubes(spec)
    try:
        if spec is not None:
            spec = check_cubes(
                place_cubes(spec, scene_name=model, drawer=opening or 0.0, seed=seed)
            )
        return SceneSpec(model=model, cubes=spec, drawer=opening, light=lit)
    except ValidationError as e:
        raise UserError(str(e.errors()[0]["msg"]).removeprefix("Value error, "), 2) from None
    except ValueError as e:
        raise UserError(str(e), 2) from None


def spec_world(seed: int, spec):
    """The world ``plan`` plans in: the scene ``spec`` (:func:`build_scene`) reset at
    ``seed``, as ``run`` resets it (see :func:`run_scene`)."""
    return reset_world(seed, spec.reset_options(), spec.model)


def run_scene(spec) -> dict:
    """The :class:`skillbridge.runner.records.RunConfig` fields of the scene ``spec``: the
    runner resets the env with the same options as :func:`scene_world`."""
    return {"scene": spec.model, "cubes": spec.cubes, "drawer": spec.drawer, "light": spec.light}
