"""The articulated scene (sim/assets/articulated.xml): opt-in, built on the tabletop scene
without changing it, laid out in the arm's reach and clear of the cubes and bins, with an
env that resets deterministically and passes gymnasium's checker, and world-state
predicates for the drawer, the light and towers."""

from __future__ import annotations

import math

import mujoco
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from sim import physics, scene
from sim.controller import ArmController
from sim.env import TabletopEnv
from sim.world import WorldState, cube_reachable, reachable_xy

TABLETOP_BODIES = (
    "world table ee_target base link1 link2 link3 link4 link5 hand finger_left finger_right "
    "red_bin green_bin blue_bin red_block green_block blue_block yellow_block"
).split()


@pytest.fixture(scope="module")
def model() -> mujoco.MjModel:
    return physics.load_model("articulated")


@pytest.fixture
def aenv():
    e = TabletopEnv(scene="articulated")
    yield e
    e.close()


# ---------------------------------------------------------------- the model
def test_default_scene_is_untouched():
    default = physics.load_model()
    assert physics.load_model("tabletop").nq == default.nq == 36
    assert default.nuserdata == 0
    # the default scene's hash is the one it always had: its file, then the robot's
    text = scene.ASSET_PATH.read_bytes() + scene.ROBOT_PATH.read_bytes()
    from sim.util import sha256_bytes

    assert physics.model_hash() == sha256_bytes(text + mujoco.__version__.encode())
    assert physics.model_hash("articulated") != physics.model_hash()
    e = TabletopEnv()
    assert e.articulation is None and "articulation" not in e.observation_space.spaces
    e.reset(seed=0)
    assert not {"drawer", "button", "light_on"} & set(e.world_state().model_dump())
    with pytest.raises(ValueError, match="articulated"):
        e.reset(seed=0, options={"drawer": 0.1})
    with pytest.raises(ValueError, match="unknown scene"):
        TabletopEnv(scene="kitchen")
    with pytest.raises(ValueError, match="unknown scene"):
        physics.load_model("kitchen")


def test_articulated_scene_includes_the_tabletop_and_adds_after_it(model):
    assert '<include file="tabletop.xml"/>' in scene.ARTICULATED_PATH.read_text()
    names = [model.body(i).name for i in range(model.nbody)]
    assert names[: len(TABLETOP_BODIES)] == TABLETOP_BODIES
    assert set(names[len(TABLETOP_BODIES) :]) == {"cabinet", "drawer", "lamp", "button_base"} | {
        "button"
    }
    default = physics.load_model()
    # everything of the tabletop keeps its place in qpos, qvel and ctrl
    for j in range(default.njnt):
        assert model.joint(default.joint(j).name).qposadr == default.jnt_qposadr[j]
    assert model.nu == default.nu and model.nuserdata == 2
    assert model.opt.timestep == default.opt.timestep
    drawer = model.joint(scene.DRAWER_JOINT)
    assert drawer.type == mujoco.mjtJoint.mjJNT_SLIDE and drawer.limited
    assert drawer.range[1] == pytest.approx(scene.DRAWER_TRAVEL) and drawer.damping > 0
    button = model.joint(scene.BUTTON_JOINT)
    assert button.type == mujoco.mjtJoint.mjJNT_SLIDE and button.stiffness > 0
    assert -button.range[0] > scene.BUTTON_PRESS_DEPTH
    # user data is in the saved state: the light survives save/restore
    assert int(physics.STATE_SPEC) & int(mujoco.mjtState.mjSTATE_USERDATA)


def test_drawer_holds_two_cubes_and_its_constants_match_the_file(model):
    hx, hy = scene.DRAWER_INNER_HALF
    assert 2 * min(hx, hy) > 2 * (2 * scene.CUBE_HALF)
    side = model.geom("drawer_side_l")
    assert side.pos[1] - side.size[1] == pytest.approx(hy)
    back = model.geom("drawer_back")
    assert back.pos[0] - back.size[0] == pytest.approx(hx)
    floor = model.geom("drawer_floor")
    assert floor.pos[2] + floor.size[2] == pytest.approx(scene.DRAWER_FLOOR_Z)
    assert side.pos[2] + side.size[2] == pytest.approx(scene.DRAWER_WALL_TOP)


def _footprints(m: mujoco.MjModel, d: mujoco.MjData, bodies: tuple[str, ...]):
    """World x/y boxes (lo, hi) of the colliding geoms of ``bodies`` (boxes and upright
    cylinders, none turned about z but by quarter turns)."""
    out = []
    for g in range(m.ngeom):
        if m.body(m.geom_bodyid[g]).name not in bodies or not m.geom_contype[g]:
            continue
        size = m.geom_size[g]
        half = size[:2] if m.geom_type[g] == mujoco.mjtGeom.mjGEOM_BOX else size[[0, 0]]
        h = np.abs(d.geom_xmat[g].reshape(3, 3)[:2, :2]) @ half
        out.append((d.geom_xpos[g][:2] - h, d.geom_xpos[g][:2] + h))
    return out


def _overlaps(a, lo, hi) -> bool:
    return bool(np.all(a[0] < hi) and np.all(lo < a[1]))


@pytest.mark.parametrize("opening", [0.0, scene.DRAWER_TRAVEL])
def test_furniture_is_clear_of_the_spawn_area_and_the_bins(model, opening):
    d = mujoco.MjData(model)
    d.qpos[model.joint(scene.DRAWER_JOINT).qposadr] = opening
    mujoco.mj_forward(model, d)
    boxes = _footprints(model, d, ("cabinet", "drawer", "button_base", "button"))
    # a spawned cube turned by up to 0.35 rad reaches this far past its centre
    reach = scene.CUBE_HALF * (math.cos(0.35) + math.sin(0.35))
    spawn = (scene.SPAWN_LOW - reach, scene.SPAWN_HIGH + reach)
    for b in boxes:
        assert not _overlaps(b, *spawn), b
        for n in scene.BIN_NAMES:
            c = d.xpos[model.body(n).id][:2]
            half = scene.BIN_INNER_HALF + 0.008
            assert not _overlaps(b, c - half, c + half), (b, n)
        for x, y in scene.REGIONS.values():
            r = scene.REGION_RADIUS
            assert not _overlaps(b, np.array([x - r, y - r]), np.array([x + r, y + r])), b


def test_handle_inside_and_button_are_in_reach(model):
    d = mujoco.MjData(model)
    ctl = ArmController(model)
    handle = model.site("drawer_handle_site").id
    for opening in (0.0, scene.DRAWER_TRAVEL / 2, scene.DRAWER_TRAVEL):
        d.qpos[model.joint(scene.DRAWER_JOINT).qposadr] = opening
        mujoco.mj_forward(model, d)
        h = d.site_xpos[handle].copy()
        assert reachable_xy(h[0], h[1]), (opening, h)
        ctl.solve_ik(h)  # raises when the arm cannot get there pointing down
    # the open drawer's inside: a cube placed anywhere along its +y half can be picked
    centre = d.xpos[model.body(scene.DRAWER_NAME).id]
    hx, hy = scene.DRAWER_INNER_HALF
    y = scene.WORKSPACE_LOW[1] - 0.005
    assert centre[1] - hy + scene.CUBE_HALF < y < centre[1] + hy - scene.CUBE_HALF
    for x in np.linspace(centre[0] - hx + scene.CUBE_HALF, centre[0] + hx - scene.CUBE_HALF, 4):
        assert cube_reachable(x, y)
        ctl.solve_ik(np.array([x, scene.WORKSPACE_LOW[1], 0.06]))
    button = d.xpos[model.body(scene.BUTTON_NAME).id]
    assert reachable_xy(button[0], button[1])
    ctl.solve_ik(np.array([button[0], button[1], 0.05]))


# ---------------------------------------------------------------- the env
def test_check_env_on_the_articulated_env(aenv):
    check_env(aenv, skip_render_check=True)
    assert aenv.observation_space["articulation"].shape == (3,)


def test_same_seed_same_state_bit_for_bit():
    a, b = TabletopEnv(scene="articulated"), TabletopEnv(scene="articulated")
    for seed, options in ((0, None), (5, {"drawer": 0.07, "light": True})):
        oa, _ = a.reset(seed=seed, options=options)
        ob, _ = b.reset(seed=seed, options=options)
        assert np.array_equal(a.get_state(), b.get_state())
        assert oa.keys() == ob.keys() and all(np.array_equal(oa[k], ob[k]) for k in oa)
        assert a.world_state().compact_json() == b.world_state().compact_json()
    # a second reset with the same seed is the first one again
    first = a.get_state()
    a.step(np.array([0.5, -0.5, -0.2, 1.0]))
    a.reset(seed=5, options={"drawer": 0.07, "light": True})
    assert np.array_equal(first, a.get_state())


def test_reset_options_set_drawer_and_light(aenv):
    obs, _ = aenv.reset(seed=1, options={"drawer": scene.DRAWER_TRAVEL, "light": True})
    assert obs["articulation"][0] == pytest.approx(scene.DRAWER_TRAVEL, abs=2e-3)
    assert obs["articulation"][2] == 1.0
    w = aenv.world_state()
    assert w.is_open() and not w.is_closed() and w.light_on is True
    obs, _ = aenv.reset(seed=1)
    w = aenv.world_state()
    assert w.is_closed() and not w.is_open() and w.light_on is False
    assert w.button is not None and not w.button.pressed and w.button.depth < 0.002
    with pytest.raises(ValueError, match="drawer must be in"):
        aenv.reset(seed=1, options={"drawer": 0.3})


def test_reset_cubes_stay_clear_of_the_furniture(aenv):
    for seed in range(8):
        aenv.reset(seed=seed)
        aenv.step_physics(np.array([0.0, 0.0, 0.0, -1.0]), control_steps=5)
        w = aenv.world_state()
        assert all(o.on_table for o in w.objects)
        assert w.drawer is not None and w.drawer.contents == []


def test_light_is_rendered_from_the_state():
    e = TabletopEnv(scene="articulated", render_mode="rgb_array", width=160, height=120)
    e.reset(seed=0, options={"light": True})
    on = e.render()
    lamp = e.model.geom(scene.LAMP_GEOM).id
    assert e.model.geom_matid[lamp] == e.model.material("lamp_on").id
    saved_on = e.get_state()
    e.reset(seed=0)
    off = e.render()
    assert e.model.geom_matid[lamp] == e.model.material("lamp_off").id
    assert not np.array_equal(on, off)
    e.set_state(saved_on)  # a restored state renders as it was
    assert np.array_equal(e.render(), on)
    e.close()


# ---------------------------------------------------------------- the world state
def _settle(env, steps: int = 15) -> WorldState:
    env.step_physics(np.array([0.0, 0.0, 0.0, -1.0]), control_steps=steps)
    return env.world_state()


def test_cube_in_the_open_drawer_reads_in_drawer(aenv):
    aenv.reset(seed=0, options={"drawer": scene.DRAWER_TRAVEL})
    c = aenv.data.xpos[aenv.model.body(scene.DRAWER_NAME).id]
    cubes = {
        "red_block": [c[0] - 0.03, c[1] + 0.006, scene.DRAWER_FLOOR_Z + scene.CUBE_HALF, 0.0],
        "blue_block": [c[0] + 0.03, c[1] + 0.006, scene.DRAWER_FLOOR_Z + scene.CUBE_HALF, 0.2],
        "green_block": [0.0, -0.1],
    }
    aenv.reset(seed=0, options={"drawer": scene.DRAWER_TRAVEL, "cubes": cubes})
    w = _settle(aenv)
    assert w.in_("red_block", "drawer") and w.in_("blue_block", "drawer")
    assert w.in_drawer("red_block") and not w.in_("green_block", "drawer")
    red = w.object("red_block")
    assert not red.on_table and red.in_bin is None and red.on is None and red.reachable
    assert w.on_table("green_block")
    assert "red_block: in drawer" in w.describe() and "drawer: open" in w.describe()
    # the JSON round trip keeps the articulated fields
    again = WorldState.model_validate_json(w.compact_json())
    assert again == w and again.in_("red_block", "drawer")


def test_three_tower_reads_on_at_each_level(aenv):
    x, y, h = 0.0, -0.12, scene.CUBE_HALF
    cubes = {
        "red_block": [x, y, h, 0.0],
        "green_block": [x, y, 3 * h + 0.0005, 0.0],
        "blue_block": [x, y, 5 * h + 0.001, 0.0],
        "yellow_block": [0.12, 0.0],
    }
    aenv.reset(seed=0, options={"cubes": cubes})
    w = _settle(aenv, 25)
    assert w.on("green_block", "red_block") and w.on("blue_block", "green_block")
    assert not w.on("blue_block", "red_block") and w.above("blue_block", "red_block")
    assert w.on_table("red_block") and not w.on_table("green_block")
    for n in ("red_block", "green_block", "blue_block"):
        assert w.top_of_stack(n) == "blue_block"
        assert w.tower(n) == ["red_block", "green_block", "blue_block"]
    assert w.top_of_stack("yellow_block") == "yellow_block"
    assert w.stack_below("blue_block") == ["green_block", "red_block"]
    assert w.clear("blue_block") and not w.clear("green_block") and not w.clear("red_block")
    assert w.top_of_stack("purple_block") is None


def test_two_stack_predicates_match_the_default_scene():
    cubes = {"red_block": [0.05, -0.1], "blue_block": [0.05, -0.1, 3 * scene.CUBE_HALF, 0.0]}
    worlds = []
    for name in ("tabletop", "articulated"):
        e = TabletopEnv(scene=name)
        e.reset(seed=3, options={"cubes": cubes})
        worlds.append(_settle(e, 20))
        e.close()
    a, b = worlds
    assert a.on("blue_block", "red_block") and b.on("blue_block", "red_block")
    for oa, ob in zip(a.objects, b.objects, strict=True):
        assert (oa.name, oa.on, oa.on_table, oa.in_bin) == (ob.name, ob.on, ob.on_table, ob.in_bin)
        assert np.allclose(oa.pos, ob.pos, atol=1e-4)


def test_furniture_constants_match_the_file(model):
    d = mujoco.MjData(model)
    mujoco.mj_forward(model, d)
    boxes = _footprints(model, d, ("cabinet",))
    lo = np.min([b[0] for b in boxes], axis=0)
    hi = np.max([b[1] for b in boxes], axis=0)
    assert np.allclose(lo, scene.CABINET_LOW) and np.allclose(hi, scene.CABINET_HIGH)
    top = model.geom("cabinet_top")
    assert top.pos[2] + top.size[2] == pytest.approx(scene.CABINET_TOP)
    assert 2 * model.geom("drawer_front").size[0] == pytest.approx(scene.DRAWER_FRONT)
    assert 2 * model.geom("drawer_side_l").size[1] == pytest.approx(scene.DRAWER_WALL)
    knob = model.geom(scene.DRAWER_HANDLE)
    assert 2 * knob.size[0] == pytest.approx(scene.HANDLE_OUT)
    assert knob.pos[1] - knob.size[1] == pytest.approx(scene.HANDLE_Y[0])
    assert knob.pos[1] + knob.size[1] == pytest.approx(scene.HANDLE_Y[1])
    assert knob.pos[2] + knob.size[2] == pytest.approx(scene.HANDLE_TOP)
    front = model.geom("drawer_front")
    assert knob.pos[0] + knob.size[0] == pytest.approx(front.pos[0] - front.size[0])


def test_grasp_blockers_know_the_furniture(aenv):
    aenv.reset(seed=0)
    x = aenv.world_state().drawer.pos[0] - scene.DRAWER_TRAVEL
    z = scene.DRAWER_FLOOR_Z + scene.CUBE_HALF
    cubes = {"red_block": [x, -0.345, z, 0.0], "green_block": [0.19, -0.255, 0.0]}
    aenv.reset(seed=0, options={"drawer": scene.DRAWER_TRAVEL, "cubes": cubes})
    w = _settle(aenv)
    # in the open drawer: the side wall is in the way of fingers along y, not along x
    assert w.grasp_blockers("red_block", "y") == ["drawer wall"]
    assert w.grasp_blockers("red_block", "x") == [] and w.graspable("red_block")
    # beside the cabinet: fingers along y would go into it
    assert w.grasp_blockers("green_block", "y") == ["cabinet"]
    assert w.grasp_axis("green_block") == "x"
    # shut in: nothing can get at it
    w.drawer = w.drawer.model_copy(update={"pos": (x + scene.DRAWER_TRAVEL, -0.351, 0.0)})
    w.objects[0] = w.objects[0].model_copy(update={"pos": (x + scene.DRAWER_TRAVEL, -0.345, z)})
    assert "cabinet" in w.blocked_by("red_block") and not w.graspable("red_block")
