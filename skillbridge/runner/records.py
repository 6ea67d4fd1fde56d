"""What a run is asked to do and what it reports: :class:`RunConfig`, :class:`RunResult`,
the progress events a :class:`~skillbridge.runner.runner.Runner` emits, and the exit codes of
``skillbridge run``. Plain records, importable without the planner or physics (the CLI
starts without them)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bridge.models import SubgoalDict


class RunEvent(StrEnum):
    """Kinds of the progress events a :class:`~skillbridge.runner.runner.Runner` passes to
    ``on_event``."""

    START = "start"
    PLAN = "plan"
    SUBGOAL_START = "subgoal_start"
    PROGRESS = "progress"
    FAULT = "fault"
    SUBGOAL_END = "subgoal_end"
    REPLAN = "replan"
    STALE = "stale"
    GOAL_CHECK = "goal_check"
    GOAL_UNMET = "goal_unmet"
    #: the conversation: a turn said (planner.conversation.Turn.to_dict()), a question
    #: asked, an answer read, an utterance taken while the robot worked
    TURN = "turn"
    QUESTION = "question"
    ANSWER = "answer"
    INTERJECTION = "interjection"
    VIDEO_START = "video_start"
    DONE = "done"


#: Closed-loop events (:class:`planner.loop.LoopEvent`) the runner records and passes on.
LOOP_EVENTS_FORWARDED = (
    RunEvent.REPLAN,
    RunEvent.STALE,
    RunEvent.GOAL_CHECK,
    RunEvent.GOAL_UNMET,
    RunEvent.QUESTION,
    RunEvent.ANSWER,
)

EventFn = Callable[[str, dict], None]


def _plan_decisions() -> tuple[str, ...]:
    """Bridge decisions that produced a plan to execute."""
    from bridge.policy import PLAN_DECISIONS  # lazy: the CLI starts without the bridge

    return PLAN_DECISIONS


TIMING_KEYS = ("planning", "bridge", "policy", "physics", "world", "recording")
DEFAULT_TASK = "put the red block in the green bin"
#: Exit codes of ``skillbridge run``.
EXIT_OK, EXIT_FAILED, EXIT_INPUT = 0, 1, 2
#: the robot asked a question back (a reference fits several things): answer and rerun
EXIT_CLARIFY = 3


def goal_met(evaluation: list | None) -> bool | None:
    """Whether every predicate of a goal evaluation holds (None without a goal)."""
    if evaluation is None:
        return None
    return all(e["met"] for e in evaluation)


@dataclass
class RunConfig:
    task: str
    llm: str | None = None
    seed: int = 0
    #: which cubes are present: names (``red_block`` or ``red``; placed at random per seed)
    #: or ``{name: pose}`` with pose ``[x, y]`` | ``[x, y, yaw]`` | ``[x, y, z, yaw]`` | None
    #: (None: at random), as :meth:`sim.env.TabletopEnv.reset` takes them; None: all cubes
    cubes: list[str] | dict[str, Any] | None = None
    max_replans: int = 2
    max_regenerations: int = 2
    out_dir: Path = Path("runs")
    video: Path | None = None
    video_in_episode: bool = False  # video.mp4 inside the episode folder
    video_speed: float = 1.0
    policy_source: str = "pretrained"
    route: str = "hybrid"
    base_url: str | None = None
    #: the scene model (``sim.scene.SCENE_NAMES``): "articulated" adds a drawer, a button
    #: and a lamp
    scene: str = "tabletop"
    #: a full physics state to start from instead of a reset (a chain of tasks run without
    #: reset: the state the previous task ended in); ``cubes`` is then ignored
    start_state: Any = None
    #: articulated scene: the drawer's opening (m) and the light at the start (None: shut,
    #: off)
    drawer: float | None = None
    light: bool | None = None
    #: answers to the robot's questions, given in advance, used in order (``run --answer``)
    answers: list[str] | None = None
    #: a scripted user: ``(control step, utterance)`` said while the robot works (``run
    #: --interject STEP:TEXT``, tests, benchmarks)
    interjections: list[tuple[int, str]] | None = None


@dataclass
class RunResult:
    task: str
    seed: int
    planner: str
    policy_source: str
    trace_id: str
    status: str
    message: str
    refusal: str | None
    plans: list[dict]
    subgoals: list[dict]
    replans: int
    world: dict
    tokens: dict
    timings: dict
    steps: int
    sim_time_s: float
    wall_s: float
    episode: str
    video: str | None = None
    video_frames: int = 0
    video_error: str | None = None
    #: the goal the run was judged by, its source (plan, effects, rules) and its final
    #: evaluation on the world from physics, ``[{"predicate", "met"}, ...]``
    goal: list | None = None
    goal_source: str | None = None
    goal_evaluation: list | None = None
    goal_replans: int = 0
    faults: list | None = None
    #: what the task was read as, and the robot's answer or question back (planner.understand)
    understanding: dict | None = None
    answer: str | None = None
    question: str | None = None
    #: the task as the conversation left it, every turn, and each utterance taken while
    #: the robot worked with its control steps (posted, taken, stopped, resumed)
    final_task: str | None = None
    turns: list | None = None
    interjections: list | None = None

    @property
    def success(self) -> bool:
        """Success is the loop's verdict, which requires the goal to hold after settling."""
        from planner.loop import RunStatus  # lazy: the CLI starts without the planner

        return self.status == RunStatus.SUCCESS

    @property
    def goal_met(self) -> bool | None:
        return goal_met(self.goal_evaluation)

    @property
    def exit_code(self) -> int:
        """0 on success, an answer or a stop (nothing was asked to move), 3 when the robot
        asks which thing was meant, 1 otherwise."""
        from planner.loop import RunStatus

        if self.success or self.status in (RunStatus.ANSWERED, RunStatus.STOPPED):
            return EXIT_OK
        if self.status == RunStatus.CLARIFY:
            return EXIT_CLARIFY
        return EXIT_FAILED

    @property
    def accepted_plan(self) -> list[SubgoalDict]:
        """The last executable plan the bridge accepted (empty if none)."""
        for p in reversed(self.plans):
            if p.get("steps") and p.get("decision") in _plan_decisions():
                return p["steps"]
        return []

    @property
    def real_time_factor(self) -> float:
        run_s = self.timings.get("run_s") or self.wall_s
        return self.sim_time_s / run_s if run_s > 0 else float("inf")

    def to_dict(self) -> dict:
        return {
            "task": self.task,
            "seed": self.seed,
            "planner": self.planner,
            "policy_source": self.policy_source,
            "trace_id": self.trace_id,
            "success": self.success,
            "status": self.status,
            "message": self.message,
            "refusal": self.refusal,
            "accepted_plan": self.accepted_plan,
            "plans": self.plans,
            "subgoals": self.subgoals,
            "replans": self.replans,
            "final_world": self.world,
            "tokens": self.tokens,
            "timings": self.timings,
            "steps": self.steps,
            "sim_time_s": round(self.sim_time_s, 4),
            "wall_s": round(self.wall_s, 4),
            "real_time_factor": round(self.real_time_factor, 3),
            "episode": self.episode,
            "video": self.video,
            "video_frames": self.video_frames,
            "video_error": self.video_error,
            "goal": self.goal,
            "goal_source": self.goal_source,
            "goal_evaluation": self.goal_evaluation,
            "goal_met": self.goal_met,
            "goal_replans": self.goal_replans,
            "faults": self.faults or [],
            # what the task was read as (planner.understand): kind plan, answer, clarify,
            # stop or refuse; the robot's answer or its question back
            "kind": (self.understanding or {}).get("kind"),
            "answer": self.answer,
            "question": self.question,
            "understanding": self.understanding,
            "final_task": self.final_task,
            "turns": self.turns or [],
            "interjections": self.interjections or [],
        }
