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
