"""A skill learned by RL alone has no scripted expert: the paths that would call one either
run its policy (the scripted source) or refuse with a clear error (eval-skill --expert)."""

from sim.env import TabletopEnv
from skills.registry import get
from skills.runtime import SkillExecutor
from tests.cli_helpers import run_cli


def test_press_button_has_no_expert_and_the_others_do():
    assert not get("press_button").has_expert
    assert all(get(n).has_expert for n in ("pick", "place", "push", "home", "open_drawer"))


def test_scripted_source_runs_the_policy_of_an_rl_only_skill():
    env = TabletopEnv(scene="articulated")
    env.reset(seed=0, options={"light": False})
    out = SkillExecutor("scripted").run(env, {"skill": "press_button"})
    assert out.success, out.reason
    assert env.world_state().light_on
    env.close()


def test_eval_skill_expert_is_refused_for_an_rl_only_skill(monkeypatch, capsys):
    for args in (["--expert"], ["--split", "all"]):
        code, _, err = run_cli(monkeypatch, capsys, "eval-skill", "press_button", "-n", "2", *args)
        assert code == 2 and "has no scripted expert" in err and "Traceback" not in err
