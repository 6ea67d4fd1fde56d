"""Measuring a skill: success rate with a 95% Wilson interval over the chained starts."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

import skills.success_model as success_model
from sim import scene
from sim.objects import spec as object_spec
from sim.util import wilson
from skills.claims import SETTLE_STEPS, confirm, run_retreat
from skills.policy import MLPPolicy
from skills.skill_env import SkillEnv


def evaluate_policy(
    skill: str,
    policy: MLPPolicy | Callable[[SkillEnv, np.ndarray], np.ndarray],
    episodes: int,
    seed: int = 0,
    env: SkillEnv | None = None,
    progress: Callable[[int, bool], None] | None = None,
    perception: str = "state",
) -> dict:
    """Deterministic rollouts from ``episodes`` seeded chained starts.

    ``perception="camera"``: the skill sees, and its success test reads, the cameras'
    estimate (``sim.perception``); each episode is also judged on the simulator's truth,
    and a success the truth does not confirm is counted as a false claim."""
    env = env or SkillEnv(skill)
    camera = perception == "camera"
    if camera:
        attach_perception(env)
    truth_ok = false_claims = crossed = false_at_crossing = unconfirmed = undone = 0
    errors: list[float] = []
    if isinstance(policy, MLPPolicy):  # executed with its own action filter, as at run time
        env.smoothing = policy.smoothing
    successes, steps = 0, []
    kinds: dict[str, list[int]] = {}  # target kind -> [successes, episodes]
    subjects: dict[str, list[int]] = {}  # the object acted on -> [successes, episodes]
    rated: dict[str, list[tuple[float, bool]]] = {}  # object -> (predicted p, outcome)
    for ep in range(episodes):
        obs, _ = env.reset(seed=seed * 100_003 + ep)
        true_before = env.sim.true_world_state() if camera else None
        done = False
        info = {"is_success": False}
        verdict = None
        while not done:
            a = policy.act(obs) if isinstance(policy, MLPPolicy) else policy(env, obs)
            obs, _, term, trunc, info = env.step(a)
            done = term or trunc
            if camera:
                errors.append(perception_error(env.sim))
            if camera and term:  # the estimate crossed into success: true at that moment?
                assert true_before is not None
                crossed += 1
                real = env.skill.success(true_before, env.sim.true_world_state(), env.params)
                false_at_crossing += not real
                # a camera claims success only once it can check it: after the skill's
                # retreat (as the runtime runs it), on what the images then confirm;
                # where they show it is not done yet, the skill goes on (its budget
                # permitting, the retreat's steps counted)
                verdict = confirm_claim(env)
                env.steps += env.skill.retreat_steps + SETTLE_STEPS
                if verdict == "undone" and env.steps < env.skill.step_budget:
                    undone += 1
                    env._raw = env.sim.observe()  # the policy goes on from here
                    obs, done = env._observe(env._raw), False
        ok = bool(info["is_success"])
        if camera:
            assert true_before is not None
            if ok:
                ok = verdict == "success"
                unconfirmed += verdict == "uncertain"
                undone += verdict == "undone"
            # the ground truth at the moment of the claim (or at the episode's end)
            real = env.skill.success(true_before, env.sim.true_world_state(), env.params)
            truth_ok += real
            false_claims += ok and not real
        successes += ok
        k = kinds.setdefault(env.binding.target_kind or "-", [0, 0])
        k[0] += ok
        k[1] += 1
        _count(subjects, env.sim.object_names, env.binding.cube, ok)
        _predicted(rated, env, ok)
        if ok:
            steps.append(env.steps)
        if progress:
            progress(ep, ok)
    lo, hi = wilson(successes, episodes)
    out = {
        "skill": skill,
        "episodes": episodes,
        "success_rate": successes / max(episodes, 1),
        "ci95": [round(lo, 4), round(hi, 4)],
        "mean_steps": float(np.mean(steps)) if steps else None,
    }
    if camera:
        out["perception"] = perception
        e = np.array(errors) if errors else np.zeros(1)
        out["true_success_rate"] = truth_ok / max(episodes, 1)
        out["true_ci95"] = [round(v, 4) for v in wilson(truth_ok, episodes)]
        out["false_success_claims"] = int(false_claims)
        # the estimate's first crossing into success, before the claim is checked: how
        # often it was not true at that moment (what a claim there would have asserted)
        out["crossings"] = int(crossed)
        out["false_at_crossing"] = int(false_at_crossing)
        out["unconfirmed"] = int(unconfirmed)  # not claimed: the images could not check it
        # no longer a success after the retreat (the skill then goes on)
        out["undone"] = int(undone)
        out["perception_error_mm"] = {
            "p50": round(float(np.percentile(e, 50)) * 1e3, 2),
            "p95": round(float(np.percentile(e, 95)) * 1e3, 2),
            "max": round(float(e.max()) * 1e3, 2),
            "steps": len(errors),
        }
    if env.sim.object_names != scene.CUBE_NAMES:  # objects of several kinds: each one's rate
        out["scene"] = env.sim.scene
        out["by_object"] = _by_object(subjects, rated)
    if len(kinds) > 1:  # e.g. place into bins vs onto cubes vs onto regions
        out["by_target"] = {
            k: {"episodes": n, "success_rate": s / n, "ci95": [round(v, 4) for v in wilson(s, n)]}
            for k, (s, n) in sorted(kinds.items())
        }
    return out


def _count(tally: dict[str, list[int]], names: tuple[str, ...], row: int | None, ok: bool) -> None:
    """Add one episode on the object at ``row`` (none: the skill acted on no object)."""
    if row is not None:
        t = tally.setdefault(names[row], [0, 0])
        t[0] += ok
        t[1] += 1


def _predicted(rated: dict[str, list[tuple[float, bool]]], env: SkillEnv, ok: bool) -> None:
    """Where the scene is not the tabletop's: the skill's shipped success predictor's
    probability at the episode's start beside its outcome, by the object acted on."""
    model = success_model.shipped(env.skill.name)
    if model is None or env.binding.cube is None or env.sim.object_names == scene.CUBE_NAMES:
        return
    p = model.prob(env.before, env.params)
    rated.setdefault(env.sim.object_names[env.binding.cube], []).append((p, ok))


def _by_object(
    tally: dict[str, list[int]], rated: dict[str, list[tuple[float, bool]]]
) -> dict[str, dict]:
    """Each object's kind, episodes, rate and its interval, from [successes, episodes]; and
    how well the skill's success predictor foresaw them (its mean probability, expected
    calibration error and Brier score over these starts)."""
    out = {}
    for n, (s, t) in sorted(tally.items()):
        out[n] = {
            "kind": object_spec(n).kind,
            "episodes": t,
            "success_rate": s / t,
            "ci95": [round(v, 4) for v in wilson(s, t)],
        }
        if rated.get(n):
            p = np.array([r[0] for r in rated[n]])
            y = np.array([float(r[1]) for r in rated[n]])
            out[n]["predictor"] = {
                "mean_p": round(float(p.mean()), 4),
                "ece": round(success_model.ece(p, y), 4),
                "brier": round(success_model.brier(p, y), 4),
            }
    return out


def attach_perception(env: SkillEnv) -> None:
    """Give each simulator of ``env`` (the nominal one and its perturbed ones) cameras."""
    from sim.perception import Perception

    for sim in (env._nominal, *env._sims.values()):
        if sim.perception is None:
            sim.perception = Perception(sim.model)


def retreat(env: SkillEnv) -> int:
    """The skill's scripted retreat after a success, as ``skills.runtime`` runs it (through
    the policy's action filter, continuing its state), and with cameras a short settle."""
    return run_retreat(env.sim, env.skill, env.binding, env.smoothing)


def confirm_claim(env: SkillEnv) -> str:
    """:func:`confirm` for a :class:`SkillEnv`'s episode."""
    return confirm(env.sim, env.skill, env.binding, env.before, env.params, env.smoothing)


def perception_error(sim) -> float:
    """The largest distance (m) between a cube's perceived and true centre, over the cubes
    in the scene that perception has a belief about."""
    belief = sim.perception.tracker.belief
    worst = 0.0
    for name, t in belief.tracks.items():
        if name in sim.present:
            true = sim.data.xpos[sim.model.body(name).id]
            worst = max(worst, float(np.linalg.norm(t.pos - true)))
    return worst


def expert_policy(env: SkillEnv, obs: np.ndarray) -> np.ndarray:
    return env.expert_action()
