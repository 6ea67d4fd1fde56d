"""A camera run's account of itself: what perception believed at the end, beside the truth.

In ``--perception camera`` the loop's verdict (success or not) is taken on the perceived
world; the goal is evaluated once more on the simulator's truth here, so a success the
truth does not confirm is counted as a false claim rather than reported as a success.
"""

from __future__ import annotations

import math


def perception_report(env, loop, true_goal_eval: list | None) -> dict:
    """``perceived_world`` (the estimate at the end), ``success_claimed`` (the loop's
    verdict), ``goal_met_truth``, ``false_success``, and each cube's position error (mm)."""
    from planner.loop import RunStatus
    from skillbridge.runner.records import goal_met

    perceived = env.world_state()
    truth = env.true_world_state()
    errors = {}
    for o in truth.objects:
        p = perceived.object(o.name)
        errors[o.name] = None if p is None else round(1e3 * math.dist(p.pos, o.pos), 2)
    claimed = loop.status == RunStatus.SUCCESS
    met = goal_met(true_goal_eval)
    known = [e for e in errors.values() if e is not None]
    return {
        "mode": "camera",
        "perceived_world": perceived.model_dump(mode="json"),
        "uncertain": env.perception.report()["uncertain"],
        "success_claimed": claimed,
        "goal_met_truth": met,
        "false_success": bool(claimed and met is False),
        "position_error_mm": errors,
        "max_position_error_mm": max(known) if known else None,
        "renders": env.perception.renders,
    }


def _cubes_of(predicate: str) -> list[str]:
    from sim import scene

    args = predicate[predicate.find("(") + 1 : predicate.rfind(")")]
    names = [a.strip() for a in args.split(",")]
    return [n for n in names if n in scene.CUBE_NAMES]


def unsure_predicates(env, goal: list[str], evaluation: list[dict]) -> list[str]:
    """The goal's predicates the estimate calls met that the images cannot confirm
    (``sim.perception.confirm``): one resting on a cube this frame's images do not pin
    (the cubes it names, and any other without which it would not hold: a neighbour a
    region's "beside" counts), or one whose verdict changes when such a cube's estimate
    moves by perception's error. A cube under another, placed from its sides, is confirmed
    for the ``on`` that names it (the side view's column) and for nothing else."""
    from bridge import goals as G
    from sim.perception.confirm import unconfirmed

    out = []
    for e in evaluation:
        if not e["met"]:
            continue
        pred = e["predicate"]
        cubes = _cubes_of(pred)

        def holds(w, pred: str = pred) -> bool:
            return all(r["met"] for r in G.evaluate([pred], w))

        stacked = cubes if pred.replace(" ", "").startswith("on(") else ()
        if unconfirmed(env, holds, cubes, stacked):
            out.append(pred)
    return out


def confirmed_goal(env, goal: list[str], world, evaluation: list[dict], look) -> tuple:
    """The closed loop's goal check from images: where a predicate the estimate calls met
    rests on a belief the images cannot confirm, ``look()`` (the arm out of the cameras'
    way, its steps recorded) and the goal is evaluated again; a predicate still unsure is
    reported unmet and ``uncertain`` (never claimed). Returns (world, evaluation)."""
    from bridge import goals as G

    if not unsure_predicates(env, goal, evaluation):
        return world, evaluation
    if world.held_object is None and look():
        world = env.world_state()
        evaluation = G.evaluate(goal, world)
    still = set(unsure_predicates(env, goal, evaluation))
    if still:
        evaluation = [
            dict(e, met=False, uncertain=True) if e["predicate"] in still else e for e in evaluation
        ]
    return world, evaluation
