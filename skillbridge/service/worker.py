"""A worker process: runs one job at a time (a task, a replay, a look at the scene) and
streams its events back.

Why a process and not a thread: a task owns a MuJoCo scene, an offscreen GL context and
torch policies; a crash or a hang in one of them must fail only that task, and a worker that
is killed (or timed out) must take nothing else down with it. So the pool
(:mod:`skillbridge.service.pool`) starts these processes, and each job is a plain JSON
document in, JSON events out (no pickled objects cross the boundary but strings).

Inside, the job runs on the process's main thread (the runner turns SIGTERM into a clean
stop there); a reader thread takes what the server sends while it runs: a user's utterance
is posted to the job's :class:`~planner.conversation.Conversation`, so the control loop
takes it at its next control step.
"""

from __future__ import annotations

import json
import os
import queue
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Any

#: Event kinds that end a job.
DONE, FAILED = "done", "failed"
READY = "ready"


class _Channel:
    """The worker's side of its two queues: events out (JSON text), commands in."""

    def __init__(self, commands: Any, events: Any) -> None:
        self.commands = commands
        self.events = events
        self.lock = threading.Lock()
        self.job_id: str | None = None
        self.conversation: Any = None
        self.jobs: queue.Queue[dict | None] = queue.Queue()

    def send(self, job_id: str | None, kind: str, data: dict) -> None:
        self.events.put(json.dumps([job_id, kind, data], default=str))

    def read(self) -> None:
        """The reader thread: jobs to the main thread, utterances to the conversation."""
        while True:
            raw = self.commands.get()
            msg = json.loads(raw)
            if msg[0] == "quit":
                self.jobs.put(None)
                return
            if msg[0] == "job":
                self.jobs.put(msg[1])
            elif msg[0] == "post":
                self._post(msg[1], msg[2])

    def _post(self, job_id: str, text: str) -> None:
        with self.lock:
            conv = self.conversation if self.job_id == job_id else None
        if conv is None:
            self.send(job_id, "post_refused", {"text": text, "error": "nothing is running"})
            return
        try:
            turn = conv.post(text)
        except Exception as e:  # noqa: BLE001 - closed, flooded, empty: said to the client
            self.send(job_id, "post_refused", {"text": text, "error": str(e)})
            return
        self.send(job_id, "posted", {"text": turn.text, "turn": turn.index, "step": turn.step})


def main(index: int, commands: Any, events: Any, policy_source: str = "pretrained") -> None:
    """Entry point of a worker process."""
    os.environ.setdefault("MUJOCO_GL", "egl")
    import torch

    torch.set_num_threads(1)
    import sim  # noqa: F401  (the GL backend is chosen before any rendering import)
    from skillbridge.runner.executor import make_executor

    ch = _Channel(commands, events)
    executors = {policy_source: make_executor(policy_source)}  # policies loaded once
    threading.Thread(target=ch.read, name="commands", daemon=True).start()
    ch.send(None, READY, {"pid": os.getpid(), "index": index})
    while True:
        job = ch.jobs.get()
        if job is None:
            return
        jid = str(job["id"])
        try:
            if job["kind"] == "task":
                _task(ch, job, executors)
            elif job["kind"] == "replay":
                _replay(ch, job)
            elif job["kind"] == "look":
                _look(ch, job)
            else:
                raise ValueError(f"unknown job kind {job['kind']!r}")
        except Exception as e:  # noqa: BLE001 - the job fails, the worker goes on
            from skillbridge.errors import UserError

            if not isinstance(e, UserError):
                traceback.print_exc(file=sys.stderr)
            msg = str(e).splitlines()[0] if str(e) else type(e).__name__
            ch.send(jid, FAILED, {"error": msg[:500], "type": type(e).__name__})
        finally:
            with ch.lock:
                ch.job_id, ch.conversation = None, None


def _summary(result: Any) -> dict:
    """What a client needs of a run's result (the full record is in the episode)."""
    d = result.to_dict()
    keep = (
        "task",
        "status",
        "success",
        "message",
        "refusal",
        "accepted_plan",
        "replans",
        "final_world",
        "goal",
        "goal_source",
        "goal_evaluation",
        "goal_met",
        "kind",
        "answer",
        "question",
        "final_task",
        "turns",
        "interjections",
        "steps",
        "sim_time_s",
        "wall_s",
        "trace_id",
    )
    out = {k: d.get(k) for k in keep}
    out["episode"] = Path(d["episode"]).name
    out["subgoals"] = [
        {
            "index": s.get("index"),
            "subgoal": s.get("subgoal"),
            "success": s.get("success"),
            "steps": s.get("steps"),
            "interrupted": bool(s.get("interrupted")),
        }
        for s in d.get("subgoals") or []
    ]
    return out


def _task(ch: _Channel, job: dict, executors: dict) -> None:
    import numpy as np

    from planner.conversation import Conversation
    from skillbridge.runner.records import RunConfig, RunEvent
    from skillbridge.runner.runner import Runner
    from skillbridge.service.frames import HEIGHT, WIDTH, FrameExecutor, FrameSource

    jid = str(job["id"])
    send = ch.send
    frames = FrameSource(
        lambda d: send(jid, "frame", d), fps=float(job.get("fps", 0)), fmt=job.get("format", "jpeg")
    )
    src = job.get("policy_source", "pretrained")
    if src not in executors:
        from skillbridge.runner.executor import make_executor

        executors[src] = make_executor(src)
    start = job.get("start_state")
    cfg = RunConfig(
        task=str(job["task"]),
        llm=job.get("llm"),
        seed=int(job.get("seed", 0)),
        cubes=job.get("cubes"),
        max_replans=int(job.get("max_replans", 2)),
        out_dir=Path(job["runs"]),
        policy_source=src,
        start_state=np.asarray(start, dtype=np.float64) if start is not None else None,
    )
    conv = Conversation(wait_s=float(job.get("answer_wait_s", 60.0)))
    box: dict[str, Any] = {}

    def on_event(kind: str, d: dict) -> None:
        runner = box.get("runner")
        if kind == RunEvent.PROGRESS:
            return
        if kind == RunEvent.START:
            env = runner.env if runner is not None else None
            if env is not None:
                env.width, env.height = WIDTH, HEIGHT
                frames.frame(env, 0, "start")
            d = {**d, "episode": Path(d["episode"]).name}
        elif kind == RunEvent.PLAN:
            for a in d.get("attempt_records") or []:
                send(
                    jid,
                    "bridge",
                    {
                        "plan": d.get("index"),
                        "proposer": a.get("proposer"),
                        "attempt": a.get("attempt"),
                        "decision": a.get("decision"),
                        "reasons": [r.get("code") for r in a.get("reasons") or []],
                    },
                )
            d = {k: v for k, v in d.items() if k != "attempt_records"}
        elif kind == RunEvent.GOAL_CHECK and runner is not None and runner.env is not None:
            frames.frame(runner.env, -1, "goal_check")
        elif kind == RunEvent.DONE:
            return  # the summary below
        send(jid, str(kind), d)

    runner = Runner(
        cfg,
        executor=FrameExecutor(executors[src], frames),
        on_event=on_event,
        conversation=conv,
    )
    box["runner"] = runner
    runner.prepare()
    with ch.lock:
        ch.job_id, ch.conversation = jid, conv
    t0 = time.perf_counter()
    result = runner.run()
    # the state the episode closed with (its final.npz), still in the runner's env
    final = None if runner.env is None else [float(x) for x in runner.env.get_state()]
    send(
        jid,
        DONE,
        {
            "result": _summary(result),
            "final_state": final,
            "frames": frames.count,
            "render_s": round(frames.render_s, 4),
            "wall_s": round(time.perf_counter() - t0, 4),
        },
    )


def _replay(ch: _Channel, job: dict) -> None:
    """The recorded states of an episode as frames, in real time at ``fps``."""
    from skillbridge.episodes.replay import frame_indices, iter_frames
    from skillbridge.service.frames import HEIGHT, WIDTH, encode, every_steps

    jid = str(job["id"])
    fps = max(1.0, float(job.get("fps", 10)))
    every = every_steps(fps)
    fmt = job.get("format", "jpeg")
    path = Path(job["path"])
    from skillbridge.episodes.episode import load

    ep = load(path)
    n = len(frame_indices(ep.n_states, every))
    ch.send(jid, "replay_start", {"episode": path.name, "frames": n, "task": ep.meta.get("task")})
    k = 0
    t0 = time.perf_counter()
    for k, rgb in enumerate(iter_frames(ep, speed=every, width=WIDTH, height=HEIGHT), 1):
        ch.send(
            jid,
            "frame",
            {
                "format": fmt,
                "width": WIDTH,
                "height": HEIGHT,
                "step": (k - 1) * every,
                "why": "replay",
                "data": encode(rgb, fmt),
            },
        )
        wait = t0 + k / fps - time.perf_counter()
        if wait > 0:
            time.sleep(wait)
    ch.send(jid, DONE, {"replay": path.name, "frames": k})


def _look(ch: _Channel, job: dict) -> None:
    """The session's scene as it is now: the world state and one frame."""
    import numpy as np

    from sim.cubes import scene_options
    from sim.env import TabletopEnv
    from skillbridge.service.frames import HEIGHT, WIDTH, encode

    jid = str(job["id"])
    env = TabletopEnv(width=WIDTH, height=HEIGHT)
    try:
        env.reset(seed=int(job.get("seed", 0)), options=scene_options(job.get("cubes")))
        if job.get("start_state") is not None:
            env.set_state(np.asarray(job["start_state"], dtype=np.float64))
        world = env.world_state().model_dump(mode="json")
        fmt = job.get("format", "jpeg")
        ch.send(
            jid,
            "frame",
            {
                "format": fmt,
                "width": WIDTH,
                "height": HEIGHT,
                "step": 0,
                "why": "look",
                "data": encode(env.render_rgb(), fmt),
            },
        )
        ch.send(jid, DONE, {"world": world})
    finally:
        env.close()
