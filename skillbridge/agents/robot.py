"""One robot for an agent: a scene that persists from task to task, plans that must be
approved by id before they move anything, a question asked back, a stop.

Why its own class (not the HTTP service): an agent calls tools one at a time in its own
process, and needs each answer as a small JSON document; the robot here runs in-process
(a :class:`~skillbridge.runner.runner.Runner` per task, started from the physics state the
last task ended in), so the tools need no server. What an agent may do is narrow on
purpose:

- :meth:`Robot.plan_task` reads the task (a question back, an answer, a refusal or a plan)
  and, for a plan, validates it through the bridge and files it under a fresh id;
- :meth:`Robot.run_task` executes a filed plan id exactly once, and only while the world is
  the one it was planned in (any run in between makes it stale: plan again);
- :meth:`Robot.answer` answers the robot's question (before a plan, or while a task waits);
- :meth:`Robot.stop` stops the task under way at its next control step.
"""

from __future__ import annotations

import secrets
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: Plans filed and not yet run, at most (the oldest is dropped).
MAX_PLANS = 32


class ToolRefusal(ValueError):
    """What an agent asked cannot be done (an unknown or stale plan id, nothing asked)."""


@dataclass
class _Approved:
    task: str
    outcome: Any
    understanding: Any
    version: int


class _OnePlan:
    """The planner of an approved run: its first plan is the approved one (validated in this
    very world); a replan after a failed step goes to the real planner (and the bridge)."""

    def __init__(self, approved: _Approved, planner: Any) -> None:
        self.approved = approved
        self.inner = planner
        self.used = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def understand(self, task: str, world: Any) -> Any:
        if not self.used and task == self.approved.task:
            return self.approved.understanding
        return self.inner.understand(task, world)

    def plan(self, task: str, world: Any, **kw: Any) -> Any:
        if not self.used:
            self.used = True
            return self.approved.outcome
        return self.inner.plan(task, world, **kw)


class Robot:
    """The robot of one agent (thread-safe: ``stop`` and ``answer`` may come while a task
    runs in another thread)."""

    def __init__(
        self,
        *,
        llm: str | None = "rules",
        seed: int = 0,
        cubes: Any = None,
        runs: Path = Path("runs"),
        policy_source: str = "pretrained",
        answer_wait_s: float = 60.0,
    ) -> None:
        from planner.hybrid import HybridPlanner

        if cubes is not None:
            from sim.cubes import check_cubes

            cubes = check_cubes(cubes)
        self.llm, self.seed, self.cubes = llm, int(seed), cubes
        self.runs = Path(runs)
        self.policy_source = policy_source
        self.answer_wait_s = float(answer_wait_s)
        self.planner = HybridPlanner.from_spec(llm)
        self._executor: Any = None
        self._lock = threading.RLock()
        self._state: Any = None  # the physics state the next task starts from
        self._version = 0  # bumped by every run: a plan is for one version of the world
        self._plans: dict[str, _Approved] = {}
        self._question: tuple[Any, str] | None = None
        self._conversation: Any = None
        self._thread: threading.Thread | None = None
        self._last: dict | None = None

    # ------------------------------------------------------------------ the world
    def _world(self) -> Any:
        import numpy as np

        from sim.cubes import scene_options
        from sim.env import TabletopEnv

        env = TabletopEnv()
        try:
            env.reset(seed=self.seed, options=scene_options(self.cubes))
            if self._state is not None:
                env.set_state(np.asarray(self._state, dtype=np.float64))
            return env.world_state()
        finally:
            env.close()

    def running(self) -> bool:
        t = self._thread
        return t is not None and t.is_alive()

    def observe_scene(self) -> dict:
        """The world as it is: blocks (where, in which bin, on what), bins, what is held;
        whether a task is running, the last result."""
        with self._lock:
            w = self._world().model_dump(mode="json")
            return {
                "world": w,
                "running": self.running(),
                "question": self._question[0].question if self._question else None,
                "last_result": self._last,
                "plans_waiting": sorted(self._plans),
            }

    # ------------------------------------------------------------------ planning
    def plan_task(self, task: str) -> dict:
        """Read and plan ``task``; a validated plan is filed under ``plan_id``."""
        task = " ".join(str(task).split())
        if not task:
            raise ToolRefusal("the task is empty")
        with self._lock:
            if self.running():
                raise ToolRefusal("a task is running; stop it or wait for it")
            world = self._world()
            u = self.planner.understand(task, world)
            if u is not None and u.kind == "clarify" and u.candidates:
                self._question = (u, task)
                return {
                    "status": "clarify",
                    "question": u.question,
                    "candidates": list(u.candidates),
                    "hint": "call answer with the user's reply",
                }
            self._question = None
            if u is not None and u.kind != "plan":
                return {"status": u.kind, "answer": u.answer, "reason": u.reason}
            return self._file(task, world, u)

    def _file(self, task: str, world: Any, u: Any) -> dict:
        from bridge.policy import PLAN_DECISIONS

        extra = {"understood": u} if u is not None else {}
        outcome = self.planner.plan(task, world, **extra)
        steps = outcome.steps()
        if outcome.decision not in PLAN_DECISIONS or not steps:
            return {
                "status": "refused" if outcome.refusal else str(outcome.decision),
                "decision": str(outcome.decision),
                "refusal": outcome.refusal,
            }
        pid = secrets.token_hex(6)
        self._plans[pid] = _Approved(task, outcome, u, self._version)
        while len(self._plans) > MAX_PLANS:
            self._plans.pop(next(iter(self._plans)))
        return {
            "status": "planned",
            "plan_id": pid,
            "task": task,
            "steps": steps,
            "goal": getattr(outcome.plan, "goal", None),
            "decision": str(outcome.decision),
        }

    def answer(self, text: str) -> dict:
        """The user's reply to the robot's question (a pending plan's, or a running task's)."""
        from planner import dialogue as D

        text = " ".join(str(text).split())
        if not text:
            raise ToolRefusal("the answer is empty")
        with self._lock:
            conv = self._conversation
            if self.running() and conv is not None:
                turn = conv.post(text)
                return {"status": "posted", "turn": turn.index}
            if self._question is None:
                raise ToolRefusal("the robot asked nothing")
            u, _ = self._question
            world = self._world()
            reading = D.resolve_answer(u, text, world)
            if reading.kind == D.STOPPED:
                self._question = None
                return {"status": "stopped"}
            if reading.kind == D.UNCLEAR or reading.task is None:
                return {
                    "status": "clarify",
                    "question": D.reask(u.question or "Which one?"),
                    "candidates": list(u.candidates or []),
                    "notes": reading.notes,
                }
            self._question = None
        return self.plan_task(reading.task)

    # ------------------------------------------------------------------ running
    def run_task(self, plan_id: str, wait: bool = True) -> dict:
        """Execute the approved plan ``plan_id`` (once); with ``wait`` the run's result."""
        with self._lock:
            if self.running():
                raise ToolRefusal("a task is running; stop it or wait for it")
            approved = self._plans.pop(str(plan_id), None)
            if approved is None:
                raise ToolRefusal(f"unknown plan id {str(plan_id)[:40]!r}: call plan_task first")
            if approved.version != self._version:
                raise ToolRefusal("the world changed since this plan was made: plan again")
            self._plans.clear()  # every other plan is for the world before this run
            runner = self._runner(approved)
            self._conversation = runner.conversation
            box: dict[str, Any] = {}
            self._thread = threading.Thread(
                target=self._run, args=(runner, box), name="robot-task", daemon=True
            )
            self._thread.start()
            thread = self._thread
        if not wait:
            return {"status": "running", "task": approved.task}
        thread.join()
        if "error" in box:
            raise ToolRefusal(box["error"])
        return dict(box["result"])

    def _runner(self, approved: _Approved) -> Any:
        import numpy as np

        from planner.conversation import Conversation
        from skillbridge.runner.executor import make_executor
        from skillbridge.runner.records import RunConfig
        from skillbridge.runner.runner import Runner

        if self._executor is None:
            self._executor = make_executor(self.policy_source)
        cfg = RunConfig(
            task=approved.task,
            llm=self.llm,
            seed=self.seed,
            cubes=self.cubes,
            out_dir=self.runs,
            policy_source=self.policy_source,
            start_state=None if self._state is None else np.asarray(self._state),
        )
        runner = Runner(
            cfg,
            planner=_OnePlan(approved, self.planner),
            executor=self._executor,
            conversation=Conversation(wait_s=self.answer_wait_s),
        )
        return runner.prepare()

    def _run(self, runner: Any, box: dict) -> None:

        try:
            r = runner.run()
            d = r.to_dict()
            out = {
                k: d.get(k)
                for k in (
                    "status",
                    "success",
                    "message",
                    "goal_evaluation",
                    "goal_met",
                    "final_task",
                    "answer",
                    "question",
                    "interjections",
                )
            }
            out["episode"] = Path(d["episode"]).name
            out["subgoals"] = [
                {"subgoal": s.get("subgoal"), "success": s.get("success")}
                for s in d.get("subgoals") or []
            ]
            # the state the episode closed with (its final.npz), still in the runner's env
            state = None if runner.env is None else runner.env.get_state()
            with self._lock:
                if state is not None:
                    self._state = state
                self._version += 1
                self._last = out
            box["result"] = out
        except Exception as e:  # noqa: BLE001 - the agent gets the reason, the robot goes on
            with self._lock:
                self._version += 1
                self._last = {"status": "error", "message": str(e)[:300]}
            box["error"] = str(e).splitlines()[0][:300] if str(e) else type(e).__name__
        finally:
            with self._lock:
                self._conversation = None

    def wait(self, timeout: float | None = None) -> dict | None:
        """Block until the running task ends; the last result."""
        t = self._thread
        if t is not None:
            t.join(timeout)
        return self._last

    def stop(self) -> dict:
        """Stop the running task at its next control step (nothing else moves after)."""
        with self._lock:
            conv = self._conversation
            if not self.running() or conv is None:
                self._question = None
                return {"status": "idle", "detail": "nothing is running"}
            conv.post("stop")
        return {"status": "stopping"}
