"""The end-to-end runner: the one place that wires planner, bridge, skills and physics.

``Runner(RunConfig(task=...)).run()`` resets the scene, lets the closed loop
(:func:`planner.loop.run_closed_loop`) plan through the bridge, executes every accepted
subgoal with its skill policy, and records everything as an episode
(:mod:`skillbridge.episodes.episode`): per control step the full physics state, the action and the
active subgoal; planner calls, bridge decisions and skill outcomes in the trace; structured
logs with the task's trace id. It measures where the wall time goes (planning, bridge,
policy, physics, world state, recording) and what the planner spent in tokens.

With a conversation (:mod:`planner.conversation`) the run talks: the closed loop asks its
questions there, and an utterance posted while a skill runs is taken at the next control
step: the skill is stopped and the arm brought to rest (those steps are recorded with
subgoal :data:`STOP_INDEX`), or a release in progress is finished, and the loop replans.
Every turn lands in the trace from this thread, whichever thread said it.

All input is checked in :meth:`Runner.prepare`, before anything is created on disk, so bad
input is one :class:`~skillbridge.errors.UserError` and leaves nothing half-written.
"""

from __future__ import annotations

import logging
import math
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from skillbridge.errors import UserError
from skillbridge.runner.executor import control_dt, make_executor
from skillbridge.runner.records import (
    DEFAULT_TASK,
    EXIT_FAILED,
    EXIT_INPUT,
    LOOP_EVENTS_FORWARDED,
    TIMING_KEYS,
    EventFn,
    RunConfig,
    RunEvent,
    RunResult,
    goal_met,
)
from skillbridge.runner.signals import install_sigterm, restore_sigterm

if TYPE_CHECKING:
    from sim.env import TabletopEnv
    from sim.world import WorldState
    from skillbridge.episodes.episode import EpisodeWriter

log = logging.getLogger("skillbridge.runner")

#: Sim time the physics settles (a hold action) after the last subgoal before the goal is
#: judged: a cube still rolling off a stack or bouncing out of a bin counts as it ends up.
SETTLE_S = 0.5
#: ``subgoal`` index of the settling steps in the episode (no subgoal is active).
SETTLE_INDEX = -1
#: ``subgoal`` index of the steps that bring the arm to rest after an interjection stopped
#: its subgoal (the superseded plan commands nothing from there on).
STOP_INDEX = -2
#: The arm is at rest once its grip site moves less than this in a control step (m) ...
REST_M = 0.001
#: ... after at least and at most this many hold steps.
STOP_MIN_STEPS, STOP_MAX_STEPS = 2, 12
#: A place is "about to release" (an interjection lets it finish rather than stop it with
#: the cube hanging over its target) when its gripper is already opening, or the held cube
#: is this close to the target horizontally (m) ...
RELEASE_XY = 0.025
#: ... and this low above it (m).
RELEASE_DZ = 0.09


class _Stop(Exception):  # noqa: N818 - control flow out of the skill's step loop
    """Raised from a skill's step hook when an interjection stops it (before the step)."""

    def __init__(self, interjection, turn) -> None:
        super().__init__(turn.text)
        self.interjection, self.turn = interjection, turn


class _TracedPlanner:
    """Wraps the planner so each negotiation lands in the trace and the timings as it happens."""

    def __init__(self, inner, runner: Runner):
        self.inner = inner
        self.runner = runner
        self.max_steps = inner.max_steps
        self.spec = inner.spec

    def understand(self, task, world):
        """The inner planner's reading of the task (None where it has none)."""
        fn = getattr(self.inner, "understand", None)
        return fn(task, world) if fn is not None else None

    def plan(self, task, world, *, history=None, trace_id=None, **kw):
        t0 = time.perf_counter()
        out = self.inner.plan(task, world, history=history, trace_id=trace_id, **kw)
        dt = time.perf_counter() - t0
        bridge_s = sum(float(getattr(a, "validate_s", 0.0) or 0.0) for a in out.attempts)
        self.runner.timings["bridge"] += bridge_s
        self.runner.timings["planning"] += max(0.0, dt - bridge_s)
        self.runner._record_plan(out, dt)
        return out


class Runner:
    """One task, one episode. Construct, :meth:`prepare` (checks input), :meth:`run`."""

    def __init__(
        self,
        config: RunConfig,
        *,
        planner=None,
        executor=None,
        on_event: EventFn | None = None,
        fault=None,
        conversation=None,
        perception: str = "state",
    ):
        self.config = config
        #: "camera": the skills, the planner, the bridge and the goal check see the cameras'
        #: estimate (``sim.perception``); the episode still records the truth, and
        #: :attr:`perception_report` says how far off the estimate was at the end.
        self.perception = perception
        self.perception_report: dict | None = None
        #: A camera run going on from another's end (a chain's next link): its belief.
        self.perception_prior = None
        #: the dialogue (planner.conversation.Conversation): questions asked there, and
        #: utterances posted to it (any thread) taken at the next control step; built from
        #: ``config.answers`` / ``config.interjections`` when not given
        self.conversation = conversation
        self.interjections: list[dict] = []
        self._turns_out: list = []
        self.planner = planner
        self.executor = executor
        #: test hook (fault injection, real physics): ``fault.after_subgoal(env, index,
        #: subgoal, success)`` may disturb the scene and returns a description, or None
        self.fault = fault
        self.faults: list[dict] = []
        self.on_event = on_event or (lambda kind, data: None)
        self.timings: dict[str, float] = {k: 0.0 for k in TIMING_KEYS}
        self.trace_id = uuid.uuid4().hex[:16]
        self.subgoals: list[dict] = []
        self.plans: list[dict] = []
        self.tokens = {"in": 0, "out": 0, "calls": 0}
        self.writer: EpisodeWriter | None = None
        self.env: TabletopEnv | None = None
        self._prepared = False

    # ------------------------------------------------------------------ input checks
    def prepare(self) -> Runner:
        """Check every input and build planner and executor; create nothing on disk but
        the output folder itself."""
        from skillbridge.episodes.episode import EpisodeError, check_writable

        c = self.config
        if not isinstance(c.task, str) or not c.task.strip():
            raise UserError(f'the task is empty; e.g. "{DEFAULT_TASK}"', EXIT_INPUT)
        c.task = " ".join(c.task.split())
        if c.max_replans < 0:
            raise UserError("--max-replans must be >= 0", EXIT_INPUT)
        from skillbridge.episodes.replay import check_speed

        try:
            check_speed(c.video_speed)
        except EpisodeError as e:
            raise UserError(str(e), EXIT_INPUT) from None
        if c.cubes is not None:
            from sim.cubes import check_cubes

            try:
                c.cubes = check_cubes(c.cubes)
            except ValueError as e:
                raise UserError(str(e), EXIT_INPUT) from None
        from sim import scenes
        from sim.scene import SCENE_NAMES

        if c.scene not in SCENE_NAMES:
            raise UserError(
                f"unknown scene {c.scene!r}; choose one of {', '.join(SCENE_NAMES)}", EXIT_INPUT
            )
        if not scenes.get(c.scene).articulated and (c.drawer is not None or c.light is not None):
            raise UserError("drawer and light are options of the articulated scene", EXIT_INPUT)
        if self.planner is None:
            from planner.errors import PlannerError
            from planner.hybrid import ROUTES, HybridPlanner

            if c.route not in ROUTES:
                raise UserError(
                    f"route must be one of {', '.join(ROUTES)}, not {c.route!r}", EXIT_INPUT
                )
            try:
                self.planner = HybridPlanner.from_spec(
                    c.llm,
                    base_url=c.base_url,
                    route=c.route,
                    max_regenerations=c.max_regenerations,
                )
            except PlannerError as e:
                raise UserError(str(e).splitlines()[0], EXIT_INPUT) from None
        if self.executor is None:
            self.executor = make_executor(c.policy_source)
        self._prepare_conversation()
        try:
            check_writable(Path(c.out_dir))
            if c.video is not None:
                from sim.video import check_video_target

                check_video_target(c.video)  # never over a device, a non-video, an episode
                check_writable(Path(c.video).parent)
        except (EpisodeError, OSError) as e:
            raise UserError(str(e), EXIT_INPUT) from None
        self._prepared = True
        return self

    def _prepare_conversation(self) -> None:
        """Check the scripted answers and interjections; the conversation they make."""
        from planner.conversation import MAX_PENDING, MAX_TEXT

        c = self.config
        for k, text in c.interjections or []:
            if not isinstance(k, int) or isinstance(k, bool) or k < 0:
                raise UserError(f"an interjection's step must be >= 0, not {k!r}", EXIT_INPUT)
            if not str(text).strip():
                raise UserError("an interjection is empty", EXIT_INPUT)
        if any(not str(a).strip() for a in c.answers or []):
            raise UserError("an --answer is empty", EXIT_INPUT)
        said = [str(t) for _, t in c.interjections or []] + [str(a) for a in c.answers or []]
        if any(len(t) > MAX_TEXT for t in said):
            raise UserError(f"an answer or interjection is over {MAX_TEXT} characters", EXIT_INPUT)
        if len(said) > MAX_PENDING:
            raise UserError(f"at most {MAX_PENDING} answers and interjections", EXIT_INPUT)
        if self.conversation is None and (c.answers or c.interjections):
            from planner.conversation import Conversation

            self.conversation = Conversation(answers=c.answers or ())
        if self.conversation is not None and c.interjections:
            from planner.conversation import ScriptedUser

            ScriptedUser(self.conversation, [(int(k), str(t)) for k, t in c.interjections])

    # ------------------------------------------------------------------ the run
    def run(self) -> RunResult:
        if not self._prepared:
            self.prepare()
        import mujoco

        import sim  # noqa: F401  (chooses the GL backend before rendering imports)
        from planner.loop import run_closed_loop
        from sim import physics, scene
        from sim.cubes import scene_options
        from sim.env import TabletopEnv
        from sim.util import library_versions
        from skillbridge.episodes.episode import (
            COMPLETE,
            INCOMPLETE,
            EpisodeError,
            EpisodeWriter,
            EventLogHandler,
        )

        c = self.config
        t_start = time.perf_counter()
        env = self.env = TabletopEnv(scene=c.scene)
        options = None if c.start_state is not None else scene_options(c.cubes)
        if c.start_state is None and (c.drawer is not None or c.light is not None):
            devices = {"drawer": c.drawer, "light": c.light}
            options = {**(options or {}), **{k: v for k, v in devices.items() if v is not None}}
        env.reset(seed=c.seed, options=options)
        if c.start_state is not None:
            env.set_state(c.start_state)
        # Make the derived quantities (positions, Jacobians) a function of the recorded state
        # alone: restoring a state also runs mj_forward, so replay starts from exactly here.
        mujoco.mj_forward(env.model, env.data)
        env.timings = self.timings  # physics and world-state seconds land in the breakdown
        self._perceive(env)
        world = env.world_state()
        spec = str(getattr(self.planner, "spec", "custom"))
        meta = {
            "trace_id": self.trace_id,
            "seed": c.seed,
            "scene": {
                **(options or {"cubes": None}),
                "env": "TabletopEnv",
                # the default scene is implied, as in every episode recorded before
                **({} if c.scene == scene.DEFAULT_SCENE else {"name": c.scene}),
                **({} if c.start_state is None else {"continued": True}),
            },
            "model_hash": physics.model_hash(c.scene),
            "physics_dt": scene.PHYSICS_DT,
            "control_dt": scene.CONTROL_DT,
            "control_substeps": scene.CONTROL_SUBSTEPS,
            "versions": library_versions(),
            "planner": {
                "spec": spec,
                "route": getattr(self.planner, "route", None),
                "max_regenerations": c.max_regenerations,
                "max_replans": c.max_replans,
            },
            "policy_source": getattr(self.executor, "source", c.policy_source),
            **self._initial_worlds(env, world),
        }
        try:
            self.writer = EpisodeWriter.create(
                c.out_dir, task=c.task, initial_state=env.get_state(), meta=meta
            )
        except Exception as e:  # noqa: BLE001 - e.g. the disk filled between check and write
            raise UserError(str(e), EXIT_INPUT) from None
        writer = self.writer
        handler = EventLogHandler(writer, self.trace_id)
        root = logging.getLogger("skillbridge")
        old_level = root.level
        root.addHandler(handler)
        if root.getEffectiveLevel() > logging.INFO:
            root.setLevel(logging.INFO)
        old_term = install_sigterm()
        error: BaseException | None = None
        result: RunResult | None = None
        try:
            self._emit(
                RunEvent.START,
                {
                    "task": c.task,
                    "seed": c.seed,
                    "planner": spec,
                    "trace_id": self.trace_id,
                    "episode": str(writer.path),
                },
            )
            conv = self._listen()
            t_loop = time.perf_counter()
            loop = run_closed_loop(
                c.task,
                world,
                self._execute,
                # duck-typed: the loop asks a planner for plan(), max_steps and spec only
                planner=cast(Any, _TracedPlanner(self.planner, self)),
                max_replans=c.max_replans,
                trace_id=self.trace_id,
                on_event=self._loop_event,
                verify=self._verify,
                conversation=conv,
            )
            self._drain_turns()
            final_world = env.true_world_state()  # the truth, whatever the robot saw
            goal_eval = self._final_goal(loop, final_world)
            self._report_perception(env, loop, goal_eval)
            writer.trace(
                "end",
                status=loop.status,
                message=loop.message,
                refusal=loop.refusal,
                replans=loop.replans,
                world=final_world.model_dump(mode="json"),
                goal=loop.goal,
                goal_source=loop.goal_source,
                goal_evaluation=goal_eval,
                **({"perception": self.perception_report} if self.perception_report else {}),
            )
            self._log(
                "run_end",
                f"run {loop.status}: {loop.message}",
                status=loop.status,
                steps=writer.steps,
                replans=loop.replans,
            )
            t0 = time.perf_counter()
            writer.close(
                COMPLETE,
                env.get_state(),
                result={
                    "status": loop.status,
                    "message": loop.message,
                    "refusal": loop.refusal,
                    "replans": loop.replans,
                    "subgoals": len(self.subgoals),
                    "goal": loop.goal,
                    "goal_source": loop.goal_source,
                    "goal_evaluation": goal_eval,
                    "goal_met": goal_met(goal_eval),
                    "goal_replans": loop.goal_replans,
                    "faults": self.faults,
                    **(
                        {
                            "final_task": loop.task,
                            "turns": len(loop.turns),
                            "interjections": len(self.interjections),
                        }
                        if conv is not None
                        else {}
                    ),
                },
            )
            self.timings["recording"] += time.perf_counter() - t0
            run_s = time.perf_counter() - t_loop
            result = self._result(loop, final_world, goal_eval, run_s, t_start)
        except (OSError, EpisodeError) as e:
            # the disk filled up mid-run (or the folder went away): one line, not a chain of
            # tracebacks; what reached the disk stays a readable episode marked incomplete
            error = e
            msg = (e.strerror or str(e)) if isinstance(e, OSError) else str(e)
            raise UserError(
                f"the run stopped: {msg}; the episode {writer.path} is left incomplete", EXIT_FAILED
            ) from None
        except BaseException as e:
            error = e
            raise
        finally:
            if self.conversation is not None:
                self.conversation.close()
            restore_sigterm(old_term)
            if not writer.closed:
                why = (
                    "interrupted"
                    if isinstance(error, KeyboardInterrupt)
                    else f"{type(error).__name__}: {error}"[:300]
                    if error
                    else "unknown"
                )
                try:
                    writer.trace("aborted", reason=why)
                except Exception:  # noqa: BLE001
                    pass
                try:
                    writer.close(INCOMPLETE, None, result={"status": INCOMPLETE, "error": why})
                except EpisodeError:
                    pass  # still no room: meta.json on disk already says incomplete
            root.removeHandler(handler)
            root.setLevel(old_level)
            self._perceive(env, close=True)
            env.close()
        video = (
            Path(c.video)
            if c.video is not None
            else (writer.path / "video.mp4" if c.video_in_episode else None)
        )
        if video is not None:
            from skillbridge.episodes.replay import render_video

            t0 = time.perf_counter()
            self._emit(RunEvent.VIDEO_START, {"path": str(video)})
            try:
                frames = render_video(writer.path, video, speed=c.video_speed)
                result.video, result.video_frames = str(video), frames
            except Exception as e:  # noqa: BLE001 - the run itself is done and recorded
                result.video_error = f"{type(e).__name__}: {e}".splitlines()[0][:300]
            result.timings["rendering"] = round(time.perf_counter() - t0, 4)
        self._emit(RunEvent.DONE, {"result": result})
        return result

    # ------------------------------------------------------------------ pieces
    def _live(self) -> tuple[TabletopEnv, EpisodeWriter]:
        """The scene and the episode of the run in progress (they exist only inside :meth:`run`)."""
        assert self.env is not None and self.writer is not None
        return self.env, self.writer

    def _execute(self, step: dict) -> tuple[bool, WorldState]:
        env, writer = self._live()
        t = self.timings
        idx = len(self.subgoals)
        self.subgoals.append(
            {
                "index": idx,
                "subgoal": dict(step),
                "start_step": writer.steps,
                "plan": len(self.plans) - 1,
            }
        )
        self._resumed(idx)
        writer.trace("subgoal_start", index=idx, subgoal=dict(step))
        self._log("subgoal_start", f"subgoal {idx}: {step}", index=idx, subgoal=dict(step))
        self._emit(RunEvent.SUBGOAL_START, {"index": idx, "subgoal": dict(step)})
        get_state, world_state = env.get_state, env.world_state
        n = [0]
        conv = self.conversation
        finishing: list = []  # the interjection a release in progress finishes before
        last = [np.zeros(4)]

        def on_step(action):
            if conv is not None and not finishing:
                got = conv.check(writer.steps, world_state)
                self._drain_turns()
                if got is not None:
                    if self._about_to_release(env, step, action):
                        finishing.append(got)
                    else:
                        raise _Stop(*got)  # before the step: the recording stays exact
            t0 = time.perf_counter()
            last[0] = a = np.asarray(action, dtype=np.float64)  # converted once a step
            writer.record(get_state(), a, idx)
            t["recording"] += time.perf_counter() - t0
            n[0] += 1
            if n[0] % 10 == 0:
                self._emit(RunEvent.PROGRESS, {"index": idx, "steps": n[0]})

        before = {k: t[k] for k in ("physics", "world", "recording")}
        t0 = time.perf_counter()
        try:
            outcome = self.executor.run(env, dict(step), on_step=on_step)
        except _Stop as stop:
            taken = writer.steps
            held = self._hold(last[0])
            dt = time.perf_counter() - t0
            t["policy"] += max(0.0, dt - sum(t[k] - before[k] for k in before))
            return self._interrupted(idx, step, stop.interjection, stop.turn, taken, held, dt)
        dt = time.perf_counter() - t0
        t["policy"] += max(0.0, dt - sum(t[k] - before[k] for k in before))
        after = outcome.after
        if self.fault is not None:
            info = self.fault.after_subgoal(env, idx, dict(step), outcome.success)
            if info:
                # the trace's ``step`` marks the state that no action led to (replay resyncs)
                self.faults.append({"index": idx, **info})
                writer.trace("fault", index=idx, **info)
                self._log("fault", f"fault injected after subgoal {idx}: {info}", **info)
                self._emit(RunEvent.FAULT, {"index": idx, **info})
                after = env.world_state()
        rec = outcome.to_dict()
        rec.update(
            index=idx, sim_time_s=round(outcome.steps * control_dt(), 4), wall_s=round(dt, 4)
        )
        self.subgoals[idx].update(
            success=outcome.success,
            steps=outcome.steps,
            sim_time_s=rec["sim_time_s"],
            reason=outcome.reason,
            violations=outcome.violations,
            wall_s=round(dt, 4),
        )
        t1 = time.perf_counter()
        writer.flush()  # a subgoal's steps reach the disk before the next subgoal starts
        t["recording"] += time.perf_counter() - t1
        writer.trace("skill_outcome", **rec)
        self._log(
            "skill_result",
            f"subgoal {idx} {step.get('skill')}: "
            f"{'success' if outcome.success else 'failed'} in {outcome.steps} steps",
            **rec,
        )
        self._emit(RunEvent.SUBGOAL_END, rec)
        if finishing:
            from planner.conversation import Interrupted

            inter, turn = finishing[0]
            self._note_interjection(inter, turn, "finished", idx, turn.taken_step, writer.steps)
            raise Interrupted(inter, turn, after, finished=True, success=outcome.success)
        return outcome.success, after

    # ------------------------------------------------------------------ interjections
    def _about_to_release(self, env, step: dict, action) -> bool:
        """A place whose gripper is opening, or whose cube hangs low over its target: let
        it finish (stopping it there would leave the cube dangling over the target)."""
        if step.get("skill") != "place":
            return False
        w = env.world_state()
        cube = w.object(w.held_object) if w.held_object else None
        if cube is None:
            return False
        if float(np.asarray(action)[-1]) < 0:
            return True
        target = str(step.get("target"))
        where = w.bin(target) or w.object(target) or w.region(target)
        if where is None:
            return False
        tx, ty = where.pos[0], where.pos[1]
        tz = where.pos[2] if len(where.pos) > 2 else 0.0
        near = math.hypot(cube.pos[0] - tx, cube.pos[1] - ty) <= RELEASE_XY
        return near and cube.pos[2] - tz <= RELEASE_DZ

    def _hold(self, last) -> int:
        """Bring the arm to rest where it is (the hold action of the goal check: the motion
        target drawn back onto the gripper, the gripper as last commanded); recorded with
        :data:`STOP_INDEX`. The steps it took."""
        from sim import scene

        env, writer = self._live()
        ctl, data = env.controller, env.data
        speed = scene.MAX_EE_SPEED * scene.CONTROL_DT
        grip = float(np.clip(last[-1], -1.0, 1.0)) if len(last) else -1.0
        prev = np.array(ctl.grip_pos(data), dtype=np.float64)
        k = 0
        for k in range(1, STOP_MAX_STEPS + 1):
            back = (ctl.grip_pos(data) - ctl.target(data)) / speed
            action = np.array([*np.clip(back, -1.0, 1.0), grip], dtype=np.float64)
            writer.record(env.get_state(), action, STOP_INDEX)
            env.step_physics(action)
            now = np.array(ctl.grip_pos(data), dtype=np.float64)
            moved = float(np.linalg.norm(now - prev))
            prev = now
            if k >= STOP_MIN_STEPS and moved < REST_M:
                break
        writer.flush()
        return k

    def _interrupted(self, idx, step, inter, turn, taken, held, dt):
        """The subgoal an interjection stopped: its outcome in the trace, then the signal
        to the closed loop."""
        from planner.conversation import Interrupted

        env, writer = self._live()
        steps = taken - self.subgoals[idx]["start_step"]
        reason = f"interrupted: the user said {turn.text!r}"[:300]
        rec = {
            "skill": step.get("skill"),
            "params": {k: v for k, v in step.items() if k != "skill"},
            "success": False,
            "steps": steps,
            "reason": reason,
            "violations": [],
            "index": idx,
            "sim_time_s": round(steps * control_dt(), 4),
            "wall_s": round(dt, 4),
            "interrupted": True,
        }
        self.subgoals[idx].update(
            success=False,
            steps=steps,
            sim_time_s=rec["sim_time_s"],
            reason=reason,
            violations=[],
            wall_s=round(dt, 4),
            interrupted=True,
        )
        writer.trace("skill_outcome", **rec)
        self._log("skill_result", f"subgoal {idx} {step.get('skill')}: {reason}", **rec)
        self._emit(RunEvent.SUBGOAL_END, rec)
        self._note_interjection(inter, turn, "stopped", idx, taken, writer.steps, held)
        raise Interrupted(inter, turn, env.world_state(), finished=False, success=False)

    def _note_interjection(self, inter, turn, mode, idx, taken, rest_step, held=0) -> None:
        self._note(turn.index, turn.text, inter.kind, inter.task, mode, idx, turn.step, taken)
        self.interjections[-1].update(rest_step=rest_step, hold_steps=held)
        self._tell_interjection()

    def _note(self, turn, text, reading, task, mode, idx, posted, taken) -> None:
        """One utterance that superseded a subgoal: when it was posted, taken, and the arm
        was at rest (``rest_step``); the first motion of the plan after it is added when
        that plan starts (:meth:`_resumed`)."""
        d = {
            "turn": turn,
            "utterance": text,
            "reading": reading,
            "task": task,
            "mode": mode,
            "subgoal": idx,
            "posted_step": posted,
            "taken_step": taken,
            "rest_step": taken,
            "hold_steps": 0,
            "resumed_step": None,
            "resume_wall_s": None,
            "_t": time.perf_counter(),
        }
        self.interjections.append(d)

    def _tell_interjection(self) -> None:
        d = self.interjections[-1]
        shown = {k: v for k, v in d.items() if not k.startswith("_")}
        self._live()[1].trace("interjection", **shown)
        self._log("interjection", f"interjection ({d['mode']}): {d['utterance']!r}", **shown)
        self._emit(RunEvent.INTERJECTION, shown)

    def _resumed(self, idx: int) -> None:
        """A subgoal starts: the first motion after the last interjection, if it waits."""
        if not self.interjections or self.interjections[-1]["resumed_step"] is not None:
            return
        d = self.interjections[-1]
        d["resumed_step"] = self._live()[1].steps
        d["resume_wall_s"] = round(time.perf_counter() - d["_t"], 6)
        d["resumed_subgoal"] = idx
        self._live()[1].trace(
            "resumed", turn=d["turn"], subgoal=idx, delay_steps=d["resumed_step"] - d["taken_step"]
        )

    def _listen(self):
        """The conversation, with this run listening to its turns (which may be said in
        any thread: they are written from this one)."""
        if self.conversation is not None:
            self.conversation.subscribe(self._turns_out.append)
        return self.conversation

    def _drain_turns(self) -> None:
        """Write the turns said since the last call (any thread) from this one."""
        if not self._turns_out:
            return
        writer = self._live()[1]
        while self._turns_out:
            turn = self._turns_out.pop(0)
            d = turn.to_dict()
            writer.trace("turn", **_turn_record(d))
            self._log("turn", f"{turn.role} ({turn.kind}): {turn.text}", **d)
            self._emit(RunEvent.TURN, d)

    def _verify(self, goal: list[str]) -> tuple[WorldState, list[dict]]:
        """Settle the physics, then evaluate ``goal`` on the world state: the closed loop's
        success test. The arm holds still where it is (its motion target is drawn back onto
        the gripper: a zero action would let it finish the lead it was given and push on),
        the gripper stays as it is. The settling steps are recorded like any other."""
        from bridge import goals as G
        from sim import scene

        env, writer = self._live()
        ctl, data = env.controller, env.data
        n = max(1, math.ceil(SETTLE_S / control_dt() - 1e-9))
        grip = 1.0 if env.world_state().held_object else -1.0
        speed = scene.MAX_EE_SPEED * scene.CONTROL_DT
        conv = self.conversation
        for _ in range(n):
            if conv is not None:
                got = conv.check(writer.steps, env.world_state)
                self._drain_turns()
                if got is not None:  # the task changes: the loop takes it before its verdict
                    conv.defer(got[1])
                    break
            back = (ctl.grip_pos(data) - ctl.target(data)) / speed
            action = np.array([*np.clip(back, -1.0, 1.0), grip], dtype=np.float64)
            writer.record(env.get_state(), action, SETTLE_INDEX)
            env.step_physics(action)
        writer.flush()
        world = env.world_state()
        evaluation = G.evaluate(goal, world)
        if env.perception is not None:  # from images: only what they confirm is met
            from skillbridge.runner.perceived import confirmed_goal

            def look() -> bool:
                """The arm home, out of the cameras' way (recorded as settling)."""
                on_step = lambda a: writer.record(env.get_state(), a, SETTLE_INDEX)  # noqa: E731
                out = self.executor.run(env, {"skill": "home"}, on_step=on_step)
                writer.flush()
                return bool(out.success) or out.steps > 0

            world, evaluation = confirmed_goal(env, goal, world, evaluation, look)
        return world, evaluation

    # ------------------------------------------------------------------ camera runs
    def _perceive(self, env, close: bool = False) -> None:
        """Give ``env`` its cameras (``--perception camera``), or put them away."""
        if close:
            if env.perception is not None:
                env.perception.close()
        elif self.perception == "camera":
            from sim.perception import Perception

            env.perception = Perception(env.model)
            if self.perception_prior is not None:
                env.perception.carry_from(self.perception_prior)

    @staticmethod
    def _initial_worlds(env, world) -> dict:
        """The episode's initial world is the truth; a camera run adds what it saw."""
        out = {"initial_world": env.true_world_state().model_dump(mode="json")}
        if env.perception is not None:
            out["perception"] = "camera"
            out["initial_world_perceived"] = world.model_dump(mode="json")
        return out

    def _report_perception(self, env, loop, goal_eval) -> None:
        if env.perception is not None:
            from skillbridge.runner.perceived import perception_report

            self.perception_report = perception_report(env, loop, goal_eval)

    @staticmethod
    def _final_goal(loop, final_world) -> list | None:
        """The goal's evaluation on the final world (after a safe stop too)."""
        if loop.goal is None:
            return None
        from bridge import goals as G

        return G.evaluate(loop.goal, final_world)

    def _record_plan(self, out, wall_s: float) -> None:
        writer = self._live()[1]
        for a in out.attempts:
            meta = dict(getattr(a, "meta", {}) or {})
            prompt = meta.pop("prompt", None)
            self.tokens["in"] += int(a.tokens_in)
            self.tokens["out"] += int(a.tokens_out)
            self.tokens["calls"] += 1
            writer.trace(
                "planner_call",
                trace_id=a.trace_id,
                proposer=a.proposer,
                attempt=a.attempt,
                prompt=prompt,
                raw=a.raw,
                tokens_in=a.tokens_in,
                tokens_out=a.tokens_out,
                latency_s=round(a.latency_s, 6),
                meta=meta,
            )
            reasons = [r.to_dict() for r in a.reasons]
            writer.trace(
                "bridge_decision",
                proposer=a.proposer,
                attempt=a.attempt,
                decision=a.decision,
                reasons=reasons,
                validate_s=round(a.validate_s, 6),
            )
            self._log(
                "planner_call",
                f"{a.proposer}#{a.attempt}: {a.decision}",
                proposer=a.proposer,
                attempt=a.attempt,
                tokens_in=a.tokens_in,
                tokens_out=a.tokens_out,
                latency_s=round(a.latency_s, 6),
            )
            self._log(
                "bridge_decision",
                f"bridge {a.decision} {a.proposer}#{a.attempt}"
                + (f": {', '.join(r['code'] for r in reasons)}" if reasons else ""),
                decision=a.decision,
                reasons=reasons,
            )
        d = {
            "index": len(self.plans),
            "decision": out.decision,
            "source": out.source,
            "route": out.route,
            "steps": out.steps(),
            "refusal": out.refusal,
            "utterance": getattr(out, "kind", None),
            "reason": getattr(out, "reason", None),
            "understanding": (
                out.understanding.to_dict() if getattr(out, "understanding", None) else None
            ),
            "attempts": len(out.attempts),
            "wall_s": round(wall_s, 6),
            # what the accepted plan is for: its stated goal ("plan") or its effects
            "goal": getattr(out.plan, "goal", None) if out.steps() else None,
            "goal_source": getattr(out.plan, "goal_source", None) if out.steps() else None,
        }
        self.plans.append(d)
        writer.trace("plan", **d)
        self._log("plan", f"plan {d['index']}: {out.decision} by {out.source}", **d)
        self._emit(RunEvent.PLAN, {**d, "attempt_records": [a.to_dict() for a in out.attempts]})

    def _loop_event(self, kind: str, data: dict) -> None:
        self._drain_turns()
        if kind == RunEvent.INTERJECTION and not any(
            d["turn"] == data.get("turn") for d in self.interjections
        ):
            # taken between subgoals or before the verdict: nothing was moving
            d = data
            self._note(
                d["turn"],
                d["utterance"],
                d["kind"],
                d["task"],
                "idle",
                None,
                d["posted_step"],
                d["taken_step"],
            )
            self._tell_interjection()
            return
        if kind in LOOP_EVENTS_FORWARDED:
            self._live()[1].trace(kind, **data)
            self._log(kind, f"{kind}: {data}", **data)
            self._emit(kind, data)

    def _result(
        self, loop, final_world, goal_eval: list | None, run_s: float, t_start: float
    ) -> RunResult:
        writer = self._live()[1]
        steps = writer.steps
        timings = {k: round(v, 4) for k, v in self.timings.items()}
        accounted = sum(self.timings.values())
        timings["other"] = round(max(0.0, run_s - accounted), 4)
        timings["run_s"] = round(run_s, 4)
        wall = time.perf_counter() - t_start
        return RunResult(
            task=self.config.task,
            seed=self.config.seed,
            planner=str(getattr(self.planner, "spec", "custom")),
            policy_source=str(getattr(self.executor, "source", self.config.policy_source)),
            trace_id=self.trace_id,
            status=loop.status,
            message=loop.message,
            refusal=loop.refusal,
            plans=self.plans,
            subgoals=self.subgoals,
            replans=loop.replans,
            world=final_world.model_dump(mode="json"),
            tokens={
                "in": self.tokens["in"],
                "out": self.tokens["out"],
                "calls": self.tokens["calls"],
            },
            timings=timings,
            steps=steps,
            sim_time_s=steps * control_dt(),
            wall_s=wall,
            episode=str(writer.path),
            goal=loop.goal,
            goal_source=loop.goal_source,
            goal_evaluation=goal_eval,
            goal_replans=loop.goal_replans,
            understanding=getattr(loop, "understanding", None),
            answer=getattr(loop, "answer", None),
            question=getattr(loop, "question", None),
            final_task=getattr(loop, "task", None),
            turns=list(getattr(loop, "turns", None) or []),
            interjections=[
                {k: v for k, v in d.items() if not k.startswith("_")} for d in self.interjections
            ],
            faults=list(self.faults),
        )

    def _emit(self, kind: str, data: dict) -> None:
        try:
            self.on_event(kind, data)
        except Exception:  # noqa: BLE001 - a display problem must not break a run
            log.debug("progress callback failed", exc_info=True)

    def _log(self, event: str, message: str, **data: Any) -> None:
        log.info(message, extra={"event": event, "data": data, "trace_id": self.trace_id})


def _turn_record(turn: dict) -> dict:
    """A turn's fields as a trace record: ``act`` is its kind, ``said_step`` / ``said_t``
    when it was said (the record's own ``step`` and ``t`` are when it was written)."""
    d = dict(turn)
    return {
        "turn": d.pop("index"),
        "role": d.pop("role"),
        "act": d.pop("kind"),
        "text": d.pop("text"),
        "said_step": d.pop("step"),
        "said_t": d.pop("t"),
        **d,
    }


def run_task(task: str, **kw) -> RunResult:
    """Convenience: ``run_task("put the red block in the green bin", seed=0)``."""
    return Runner(RunConfig(task=task, **kw)).prepare().run()
