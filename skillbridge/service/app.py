"""The FastAPI application of ``skillbridge serve``.

Routes (the OpenAPI description is at ``/docs``):

- ``POST /sessions``: a new session (its own scene, planner and episodes);
- ``POST /sessions/{id}/messages``: a task, an answer, a correction or a stop;
- ``GET /sessions/{id}/events``: the session's events as server-sent events (the plan,
  bridge decisions, subgoal start and end, questions, answers, the goal check, frames);
- ``POST /sessions/{id}/look`` and ``/replay``: the scene as it is, a past episode replayed;
- ``DELETE /sessions/{id}``: cancel (a running task is stopped);
- ``GET /episodes``, ``GET /episodes/{name}``: the runs folder, read only;
- ``GET /``: the web page (:mod:`skillbridge.service.static`).

Handlers only touch in-memory state and queues; the robot runs in the worker processes of
:mod:`skillbridge.service.pool`.
"""

from __future__ import annotations

import asyncio
import json
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal

from fastapi import FastAPI, HTTPException, Query, Request
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, Field, field_validator
from sse_starlette.sse import EventSourceResponse

from skillbridge.service import episodes as E
from skillbridge.service.config import MAX_FPS, ServiceConfig
from skillbridge.service.pool import Full, Job, Pool
from skillbridge.service.security import Buckets, Guard
from skillbridge.service.sessions import CLOSED, END_EVENT, IDLE, QUEUED, RUNNING, Session, Sessions

STATIC = Path(__file__).parent / "static"
#: Longest utterance a message may carry (the conversation's own bound).
MAX_TEXT = 2000
#: How often an event stream looks for new events (s), and sends a keep-alive comment.
POLL_S = 0.05
PING_S = 15


class NewSession(BaseModel):
    """A session's scene and how it is watched."""

    seed: int = Field(0, ge=0, le=2**31 - 1, description="Scene seed.")
    cubes: list[str] | dict[str, Any] | None = Field(
        None, description="Cubes present (names, or {name: pose}); None: all four."
    )
    fps: float = Field(5.0, ge=0, le=MAX_FPS, description="Frames per simulated second.")
    format: Literal["jpeg", "png"] = "jpeg"

    @field_validator("cubes")
    @classmethod
    def _cubes(cls, v: Any) -> Any:
        if v is None:
            return v
        from sim.cubes import check_cubes

        try:
            return check_cubes(v)
        except ValueError as e:
            raise ValueError(str(e)) from None


class Message(BaseModel):
    """What the user says: a new ``task``, the ``answer`` to the robot's question, a
    ``correction`` while it works, or ``stop``."""

    kind: Literal["task", "answer", "correction", "stop"]
    text: str = Field("", max_length=MAX_TEXT)


class Replay(BaseModel):
    episode: str = Field(..., max_length=200)
    fps: float = Field(10.0, gt=0, le=MAX_FPS)


def _session(app: FastAPI, sid: str) -> Session:
    s = app.state.sessions.get(sid) if len(sid) < 64 else None
    if s is None:
        raise HTTPException(404, "no such session")
    return s


def _submit(app: FastAPI, s: Session, kind: str, payload: dict) -> Job:
    """Queue a job of ``s`` (409 when it has one, 429 when the queue is full)."""
    cfg: ServiceConfig = app.state.config
    pool: Pool = app.state.pool
    job = Job(
        payload={
            "kind": kind,
            "seed": s.seed,
            "cubes": s.cubes,
            "fps": s.fps,
            "format": s.format,
            "start_state": s.start_state,
            **payload,
        },
        emit=s.on_job,
        timeout_s=cfg.task_timeout_s,
    )
    with s._cv:
        if s.state != IDLE:
            raise HTTPException(409, f"the session is {s.state}; send a correction or stop")
        s.state, s.job, s.job_kind = QUEUED, job, kind
    try:
        pool.submit(job)
    except Full as e:
        with s._cv:
            s.state, s.job, s.job_kind = IDLE, None, None
        raise HTTPException(429, str(e), headers={"Retry-After": str(e.retry_after)}) from None
    s.emit("queued", {"job": kind, "position": pool.position(job)})
    return job


def _message(app: FastAPI, s: Session, body: Message, runs: Path) -> dict:
    """A task is queued; an answer or a correction goes to the running task; a stop stops
    it (or takes it off the queue)."""
    config: ServiceConfig = app.state.config
    text = " ".join(body.text.split())
    pool: Pool = app.state.pool
    if body.kind == "task":
        if not text:
            raise HTTPException(422, "the task is empty")
        payload = {
            "task": text,
            "llm": config.llm,
            "runs": str(runs.resolve()),
            "answer_wait_s": config.answer_wait_s,
            "policy_source": config.policy_source,
        }
        _submit(app, s, "task", payload)
        s.tasks += 1
        return {"accepted": True, "kind": "task", "state": s.state}
    job = s.job
    if body.kind == "stop":
        if job is not None and s.state == QUEUED and pool.cancel(job):
            with s._cv:
                s.state, s.job = IDLE, None
            s.emit("cancelled", {"why": "stopped before it started"})
            return {"accepted": True, "kind": "stop", "state": s.state}
        if job is not None and pool.post(job, text or "stop"):
            s.emit("said", {"kind": "stop", "text": text or "stop"})
            return {"accepted": True, "kind": "stop", "state": s.state}
        return {"accepted": False, "kind": "stop", "detail": "nothing is running"}
    if not text:
        raise HTTPException(422, f"the {body.kind} is empty")
    if job is None or s.state != RUNNING or not pool.post(job, text):
        raise HTTPException(409, f"nothing is running to take the {body.kind}")
    s.emit("said", {"kind": body.kind, "text": text})
    return {"accepted": True, "kind": body.kind, "state": s.state}


def _stream(request: Request, s: Session, after: int, once: bool, frames: bool):
    """The session's events from ``after`` on, as ``sse-starlette`` items."""
    ends = set(END_EVENT.values()) | {"error", "closed", "cancelled"}

    async def gen():
        seq = after
        while True:
            batch = s.after(seq)
            for ev in batch:
                seq = ev["seq"]
                if ev["kind"] == "frame" and not frames:
                    continue
                yield {"id": str(seq), "event": ev["kind"], "data": json.dumps(ev)}
                if once and ev["kind"] in ends:
                    return
            if s.state == CLOSED and not batch:
                return
            if not batch:
                if await request.is_disconnected():
                    return
                await asyncio.sleep(POLL_S)

    return gen()


def create_app(config: ServiceConfig, *, pool: Pool | None = None) -> Any:
    """The application for ``config`` (wrapped in :class:`~skillbridge.service.security.Guard`)."""

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        if app.state.pool is None:
            app.state.pool = Pool(config.workers, config.queue, policy_source=config.policy_source)
        yield
        app.state.pool.close()

    app = FastAPI(
        title="skillbridge",
        summary="Drive the tabletop robot: sessions, messages, live events, episodes.",
        lifespan=lifespan,
    )
    app.state.config = config
    app.state.pool = pool
    app.state.sessions = Sessions(config.max_sessions, config.idle_s)
    runs = Path(config.runs)
    runs.mkdir(parents=True, exist_ok=True)

    @app.get("/", include_in_schema=False)
    async def page() -> FileResponse:
        return FileResponse(STATIC / "index.html", media_type="text/html")

    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.get("/health", summary="Workers and queue")
    async def health() -> dict:
        return {"ok": True, **app.state.pool.stats(), "sessions": len(app.state.sessions.all())}

    @app.post("/sessions", status_code=201, summary="Open a session")
    async def create(body: NewSession | None = None) -> dict:
        body = body or NewSession.model_validate({})
        s = app.state.sessions.create(
            seed=body.seed, cubes=body.cubes, fps=body.fps, format=body.format
        )
        if s is None:
            raise HTTPException(429, "too many sessions are open", headers={"Retry-After": "30"})
        return s.info()

    @app.get("/sessions", summary="List open sessions")
    async def sessions() -> list[dict]:
        return [s.info() for s in app.state.sessions.all()]

    @app.get("/sessions/{sid}", summary="A session's state")
    async def session(sid: str) -> dict:
        return _session(app, sid).info()

    @app.post("/sessions/{sid}/messages", status_code=202, summary="Say something to the robot")
    async def message(sid: str, body: Message) -> dict:
        return _message(app, _session(app, sid), body, runs)

    _job_routes(app, runs)

    @app.exception_handler(ValueError)
    async def bad_value(request: Request, exc: ValueError) -> JSONResponse:
        return JSONResponse({"detail": str(exc)[:300]}, status_code=422)

    guarded = Guard(
        app,
        token=config.token,
        max_body=config.max_body,
        buckets=Buckets(config.rate, config.rate_burst),
    )
    return guarded


def _job_routes(app: FastAPI, runs: Path) -> None:
    """Looking, replaying, cancelling, the event stream and the episodes."""

    @app.post("/sessions/{sid}/look", status_code=202, summary="Render the scene as it is")
    async def look(sid: str) -> dict:
        _submit(app, _session(app, sid), "look", {})
        return {"accepted": True}

    @app.post("/sessions/{sid}/replay", status_code=202, summary="Replay an episode")
    async def replay(sid: str, body: Replay) -> dict:
        s = _session(app, sid)
        try:
            p = E.folder(runs, body.episode)
        except E.NotFound:
            raise HTTPException(404, "no such episode") from None
        _submit(app, s, "replay", {"path": str(p), "fps": body.fps, "format": s.format})
        return {"accepted": True}

    @app.delete("/sessions/{sid}", summary="Cancel a session (a running task is stopped)")
    async def cancel(sid: str) -> dict:
        s = _session(app, sid)
        pool: Pool = app.state.pool
        stopped = False
        if s.job is not None:
            stopped = pool.cancel(s.job) or pool.post(s.job, "stop")
        app.state.sessions.remove(sid)
        with s._cv:
            s.state = CLOSED
        s.emit("closed", {"why": "cancelled", "stopped": stopped})
        return {"closed": True, "stopped": stopped}

    @app.get("/sessions/{sid}/events", summary="The session's events (server-sent events)")
    async def events(
        sid: str,
        request: Request,
        after: int = Query(0, ge=0, description="Only events after this sequence number."),
        once: bool = Query(False, description="End the stream when the next job ends."),
        frames: bool = Query(True, description="Include rendered frames."),
    ) -> EventSourceResponse:
        s = _session(app, sid)
        last = request.headers.get("last-event-id")
        if last and last.isdigit():
            after = max(after, int(last))
        return EventSourceResponse(_stream(request, s, after, once, frames), ping=PING_S)

    @app.get("/episodes", summary="Episodes in the runs folder, newest first")
    async def episode_list(
        limit: int = Query(50, ge=1, le=500), session: str | None = Query(None, max_length=64)
    ) -> list[dict]:
        names = _session(app, session).episodes if session else None
        return E.listing(runs, limit, names)

    @app.get("/episodes/{name}", summary="An episode's summary, meta and trace")
    async def episode(name: str) -> dict:
        try:
            return E.read(runs, name)
        except E.NotFound:
            raise HTTPException(404, "no such episode") from None
