"""Scenes from the command line (issue 24, item 8): ``plan`` and ``run`` take ``--scene``,
``--drawer``, ``--light``, places in ``--cubes`` (``red@green_bin``, ``blue@red``) and
``--scene-file``; both build the same world through ``cli.common.build_scene``, and every
bad value is one line and exit 2."""

import json

import pytest

from bridge.goals import goal_holds, parse_literal
from sim.world import WorldState
from skillbridge.cli.common import build_scene, run_scene, spec_world
from skillbridge.errors import UserError
from tests.cli_helpers import run_cli


def holds(world: WorldState, *literals: str) -> dict[str, bool]:
    return {t: goal_holds([parse_literal(t)], world) for t in literals}


def world_of(seed: int = 0, **flags) -> WorldState:
    return spec_world(seed, build_scene(seed=seed, **flags))


def test_cubes_in_a_bin_stacked_and_side_by_side_at_a_region():
    w = world_of(
        cubes="red@green_bin,blue,yellow@blue,green@table_left", seed=3
    )  # blue at random from the seed, yellow on it
    got = holds(
        w,
        "in(red_block, green_bin)",
        "on(yellow_block, blue_block)",
        "on_table(blue_block)",
        "at(green_block, table_left)",
    )
    assert all(got.values()), got


def test_two_blocks_at_one_region_stand_side_by_side():
    w = world_of(cubes="red@table_left,blue@table_left")
    assert all(holds(w, "at(red_block, table_left)", "at(blue_block, table_left)").values())
    r, b = (w.object(n).pos for n in ("red_block", "blue_block"))
    assert ((r[0] - b[0]) ** 2 + (r[1] - b[1]) ** 2) ** 0.5 >= 0.045  # apart, not stacked


def test_articulated_drawer_open_light_on_cube_in_the_drawer():
    w = world_of(scene="articulated", drawer="open", light="on", cubes="red@drawer,blue@drawer")
    got = holds(w, "open(drawer)", "light_on", "in(red_block, drawer)", "in(blue_block, drawer)")
    assert all(got.values()), got


def test_articulated_drawer_shut_with_a_cube_inside_light_off():
    w = world_of(scene="articulated", drawer="shut", light="off", cubes="green@drawer,red")
    got = holds(w, "closed(drawer)", "not light_on", "in(green_block, drawer)")
    assert all(got.values()), got
    # a number is the opening in metres: part way out is neither open nor closed
    w = world_of(scene="articulated", drawer="0.07")
    assert not any(holds(w, "open(drawer)", "closed(drawer)").values())


def test_json_places_and_poses_mix():
    w = world_of(cubes='{"red": [0.1, 0.05], "blue": "red", "green": "blue_bin"}')
    assert all(holds(w, "on(blue_block, red_block)", "in(green_block, blue_bin)").values())


def test_scene_file_and_flags_win(tmp_path):
    f = tmp_path / "scene.yaml"
    f.write_text(
        "scene: articulated\ndrawer: open\nlight: on\n"
        "cubes: {red: drawer, blue: green_bin, green: blue}\n"
    )
    w = world_of(scene_file=f)
    got = holds(
        w,
        "open(drawer)",
        "light_on",
        "in(red_block, drawer)",
        "in(blue_block, green_bin)",
        "in(green_block, green_bin)",  # stacked on blue inside the bin: in the bin
    )
    assert all(got.values()), got
    w = world_of(scene_file=f, light="off", drawer="shut")
    assert all(holds(w, "not light_on", "closed(drawer)", "in(red_block, drawer)").values())
    # the cubes as --cubes writes them
    f.write_text("cubes: red@green_bin, blue@red\n")
    assert all(holds(world_of(scene_file=f), "in(red_block, green_bin)").values())
    # a suite task's scene block, as it is
    f.write_text("model: articulated\ndrawer: 0.15\ncubes: [red_block, blue_block]\n")
    spec = build_scene(seed=0, scene_file=f)
    assert spec.model == "articulated" and spec.drawer == 0.15


def test_run_gets_the_scene_plan_resets():
    spec = build_scene(seed=2, scene="articulated", drawer="open", cubes="red@drawer,blue@red_bin")
    fields = run_scene(spec)
    assert fields["scene"] == "articulated" and fields["drawer"] == 0.15
    assert fields["cubes"] == spec.cubes and fields["light"] is None


@pytest.mark.parametrize(
    "flags, says",
    [
        (["--drawer", "open"], "add --scene articulated"),
        (["--scene", "articulated", "--drawer", "wide"], "--drawer must be open, shut"),
        (["--scene", "articulated", "--drawer", "0.5"], "--drawer must be open, shut"),
        (["--scene", "articulated", "--drawer", "nan"], "--drawer must be open, shut"),
        (["--scene", "articulated", "--light", "dim"], "--light must be on or off"),
        (["--scene", "garden"], "--scene must be one of"),
        (["--cubes", "red@moon"], "unknown place 'moon'"),
        (["--cubes", "red@drawer"], "articulated scene"),
        (["--cubes", "red@red"], "cannot be stacked on itself"),
        (["--cubes", "red@blue,blue@red"], "round in a circle"),
        (["--cubes", "red@blue"], "not in the scene"),
        (["--cubes", "red@green,blue@green,green"], "only one cube can stand on green_block"),
        (["--cubes", "red@,blue"], "a place is NAME@PLACE"),
        (["--scene", "articulated", "--cubes", "red@drawer,blue@drawer,green@drawer"], "two"),
        (["--scene-file", "/nonexistent/scene.yaml"], "no such file"),
    ],
)
@pytest.mark.parametrize("verb", ["plan", "run"])
def test_bad_scene_input_is_one_line_exit_2(monkeypatch, capsys, tmp_path, verb, flags, says):
    extra = ["--out", str(tmp_path / "runs")] if verb == "run" else []
    code, out, err = run_cli(
        monkeypatch, capsys, verb, "put the red block in the green bin", *flags, *extra
    )
    assert code == 2, (out, err)
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and says in lines[0], err
    assert "Traceback" not in err
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


@pytest.mark.parametrize(
    "text, says",
    [
        ("[1, 2]", "expected a mapping"),
        ("colour: red\n", "unknown key(s) colour"),
        ("model: articulated\nscene: articulated\n", "give one"),
        ("a: &x [1]\nb: *x\n", "anchors and aliases"),
        ("cubes: {red: [0.1, 0.05]\n", "not valid YAML"),
        ("cubes: {red: [9, 9]}\n", "off the table"),
    ],
)
def test_bad_scene_file_is_one_line(tmp_path, text, says):
    f = tmp_path / "scene.yaml"
    f.write_text(text)
    with pytest.raises(UserError) as e:
        build_scene(seed=0, scene_file=f)
    assert e.value.code == 2 and says in str(e.value) and "\n" not in str(e.value)


def test_plan_json_shows_the_scene_and_its_world(monkeypatch, capsys):
    code, out, err = run_cli(
        monkeypatch,
        capsys,
        "plan",
        "open the drawer",
        "--route",
        "rules",
        "--json",
        "--scene",
        "articulated",
        "--drawer",
        "shut",
        "--light",
        "on",
        "--cubes",
        "red@drawer,blue@red_bin",
    )
    d = json.loads(out)
    assert d["scene"]["model"] == "articulated" and d["scene"]["light"] is True
    w = WorldState.model_validate(d["world"])
    assert all(holds(w, "closed(drawer)", "light_on", "in(red_block, drawer)").values())
    assert [s["skill"] for s in d["steps"]] == ["open_drawer"], d["steps"]


def test_plan_sees_the_world_the_flags_built(monkeypatch, capsys):
    """Planned in that world: the block already in the bin leaves nothing to do; elsewhere
    it is picked and placed."""
    code, out, _ = run_cli(
        monkeypatch, capsys, "plan", "put the red block in the green bin", "--route", "rules",
        "--json", "--cubes", "red@green_bin,blue",
    )  # fmt: skip
    d = json.loads(out)
    assert d["steps"] == [] and "nothing to do" in (d["refuse"] or "")
    code, out, _ = run_cli(
        monkeypatch, capsys, "plan", "put the red block in the green bin", "--route", "rules",
        "--json", "--cubes", "red,blue",
    )  # fmt: skip
    assert [s["skill"] for s in json.loads(out)["steps"]] == ["pick", "place"]


def test_plan_and_run_build_the_identical_world(monkeypatch, capsys, tmp_path):
    """The same flags, the same world: the world ``plan`` planned in is the world the run's
    episode starts from (its initial physics state), to the bit."""
    from sim.env import TabletopEnv
    from skillbridge.episodes.episode import load

    flags = [
        "--seed", "4", "--scene", "articulated", "--drawer", "open", "--light", "on",
        "--cubes", "red@drawer,blue,yellow@blue,green@table_left",
    ]  # fmt: skip
    task = "open the drawer"  # open already: nothing moves, the run ends at once
    code, out, _ = run_cli(monkeypatch, capsys, "plan", task, "--route", "rules", "--json", *flags)
    planned = WorldState.model_validate(json.loads(out)["world"])
    code, out, err = run_cli(
        monkeypatch, capsys, "run", task, "--route", "rules", "--json",
        "--policy-source", "scripted", "--max-replans", "0", "--out", str(tmp_path), *flags,
    )  # fmt: skip
    result = json.loads(out)
    ep = load(result["episode"])
    env = TabletopEnv(scene="articulated")
    env.reset(seed=0)
    env.set_state(ep.initial_state)
    started = env.world_state()
    env.close()
    assert started.model_dump() == planned.model_dump()
    assert all(
        holds(
            started, "open(drawer)", "light_on", "in(red_block, drawer)",
            "on(yellow_block, blue_block)", "at(green_block, table_left)",
        ).values()
    )  # fmt: skip
