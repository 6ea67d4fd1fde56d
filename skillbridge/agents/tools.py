"""The robot's operations as LangChain tools (``langchain_core.tools.StructuredTool``).

Why these five and no more: an agent sees the scene, asks for a plan, approves it by id,
answers the robot's question and stops it; it never sends motions or skill parameters, so
whatever a model says goes through the planner's reading and the bridge's validation
before anything moves. Each tool returns a JSON document (text, as chat models read it); a
refusal (unknown plan id, nothing asked) is returned as ``{"error": ...}``, for the agent to
read and recover from, rather than raised into its loop.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from skillbridge.agents.robot import Robot, ToolRefusal

#: name -> what the tool is for, as the agent's model reads it
DESCRIPTIONS = {
    "observe_scene": "See the tabletop now: each block's position, bin and support, the bins, "
    "what the gripper holds, whether a task is running and the last result.",
    "plan_task": "Plan a natural-language task (e.g. 'put the red block in the green bin'). "
    "Returns a plan_id and its steps when the bridge validated it, or the robot's question "
    "back (status clarify), an answer, or a refusal. Nothing moves.",
    "run_task": "Execute a plan by the plan_id plan_task returned (each id runs once, and only "
    "in the world it was planned in). wait=false returns at once; observe_scene tells when "
    "it ended.",
    "answer": "Answer the robot's question (the user's reply, e.g. 'the red one').",
    "stop": "Stop the running task at its next control step.",
}


def _json(fn: Callable[..., dict]) -> Callable[..., str]:
    def call(*args: Any, **kw: Any) -> str:
        try:
            return json.dumps(fn(*args, **kw), default=str)
        except (ToolRefusal, ValueError) as e:
            return json.dumps({"error": str(e)})

    return call


def robot_tools(robot: Robot) -> list[Any]:
    """The five tools bound to ``robot``."""
    from langchain_core.tools import StructuredTool

    def observe_scene() -> str:
        return _json(robot.observe_scene)()

    def plan_task(task: str) -> str:
        return _json(robot.plan_task)(task)

    def run_task(plan_id: str, wait: bool = True) -> str:
        return _json(robot.run_task)(plan_id, wait)

    def answer(text: str) -> str:
        return _json(robot.answer)(text)

    def stop() -> str:
        return _json(robot.stop)()

    fns = (observe_scene, plan_task, run_task, answer, stop)
    return [
        StructuredTool.from_function(f, name=f.__name__, description=DESCRIPTIONS[f.__name__])
        for f in fns
    ]
