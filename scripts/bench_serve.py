"""Load test of ``skillbridge serve`` on the loopback interface (bounded: a fixed number of
tasks, a wall-clock limit, then it stops by itself).

A real server (a subprocess on a free 127.0.0.1 port, the rules planner) is driven by
several concurrent sessions over HTTP and server-sent events:

1. baseline: one session runs ``--baseline`` tasks alone;
2. load: ``--sessions`` sessions at a time run ``--tasks`` tasks in all (each task in a
   session of its own: a fresh scene seeded by the task's number, so every task is one
   the robot can do); halfway, one worker process is killed (SIGKILL) in the middle of a
   task.

It reports, per phase, p50/p99 of the time from sending a task to its first event, to the
first event from the worker (the task started), to the plan, and to the result; the ratio
of the load's p50 to the baseline's (the same machine, the same run); the server's memory
(the server and its workers, resident) sampled throughout; and the checks: every event a
session received carries its own session id and its own task, and the killed worker failed
exactly the one task it ran (every other task of the load finished).

    python scripts/bench_serve.py                      # 8 sessions, 100 tasks
    python scripts/bench_serve.py --tasks 16 --json    # quick
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("MUJOCO_GL", "egl")

from skillbridge.service.client import Client, running_server  # noqa: E402

#: Tasks the sessions cycle through (each names its block and bin: its events can be told
#: apart from another session's).
TASKS = [
    "put the red block in the green bin",
    "put the blue block in the red bin",
    "put the yellow block in the blue bin",
    "put the green block in the red bin",
    "stack the blue block on the yellow block",
    "put the red block in the blue bin",
    "stack the red block on the green block",
    "put the yellow block in the green bin",
]


def pct(xs: list[float], q: float) -> float | None:
    if not xs:
        return None
    xs = sorted(xs)
    k = min(len(xs) - 1, max(0, round(q / 100 * (len(xs) - 1))))
    return round(xs[k], 4)


class Memory(threading.Thread):
    """The server's resident memory (itself and its worker processes), sampled."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.proc = psutil.Process(pid)
        self.samples: list[tuple[float, float]] = []
        self.stop = threading.Event()

    def rss_mb(self) -> float:
        total = 0
        for p in [self.proc, *self.proc.children(recursive=True)]:
            try:
                total += p.memory_info().rss
            except psutil.Error:
                pass
        return total / 2**20

    def run(self) -> None:
        t0 = time.monotonic()
        while not self.stop.wait(0.5):
            try:
                self.samples.append((time.monotonic() - t0, self.rss_mb()))
            except psutil.Error:
                return


def one_task(c: Client, sid: str, task: str, kill: threading.Event | None = None) -> dict:
    """Send ``task`` to session ``sid`` and read its events to the end; timings in s."""
    seq = c.http.get(f"/sessions/{sid}").json()["events"]
    retries = 0
    while True:
        t0 = time.perf_counter()
        r = c.say(sid, "task", task)
        if r.status_code != 429:
            break
        retries += 1
        time.sleep(float(r.headers.get("retry-after", "1")))
    r.raise_for_status()
    out: dict = {"task": task, "session": sid, "retries": retries, "foreign": 0, "kinds": []}
    killed = False
    for kind, ev in c.events(sid, after=seq, frames=True):
        dt = time.perf_counter() - t0
        out["kinds"].append(kind)
        if ev["session"] != sid:
            out["foreign"] += 1
        out.setdefault("first", dt)
        if kind == "running" and kill is not None and not kill.is_set():
            out["killed_pid"] = ev["data"]["pid"]
        if kind == "start":
            out.setdefault("started", dt)
            if ev["data"].get("task") != task:
                out["foreign"] += 1
            if "killed_pid" in out and not killed and kill is not None and not kill.is_set():
                kill.set()
                killed = True
                os.kill(out["killed_pid"], signal.SIGKILL)
        if kind == "plan":
            out.setdefault("plan", dt)
        if kind == "done":
            res = ev["data"]["result"]
            out["end"] = dt
            out["status"] = res["status"]
            if res["task"] != task:
                out["foreign"] += 1
        if kind == "error":
            out["end"] = dt
            out["status"] = "error"
            out["error"] = ev["data"].get("error")
    out["killed"] = killed
    return out


def phase(base: str, sessions: int, tasks: int, kill_at: int | None) -> dict:
    clients = [Client(base, timeout=120) for _ in range(sessions)]
    results: list[dict] = []
    lock = threading.Lock()
    counter = [0]
    kill = threading.Event() if kill_at is not None else None

    def worker(i: int) -> None:
        while True:
            with lock:
                if counter[0] >= tasks:
                    return
                n = counter[0]
                counter[0] += 1
            task = TASKS[n % len(TASKS)]
            armed = kill if (kill is not None and kill_at is not None and n >= kill_at) else None
            c = clients[i]
            sid = c.session(seed=n, fps=2)  # a fresh scene per task: every task is doable
            r = one_task(c, sid, task, armed)
            c.http.delete(f"/sessions/{sid}")
            with lock:
                results.append(r)

    t0 = time.perf_counter()
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(sessions)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    for c in clients:
        c.close()
    return {"results": results, "wall_s": round(wall, 2)}


def stats(results: list[dict]) -> dict:
    ok = [r for r in results if not r.get("killed")]
    out = {}
    for r in ok:
        if "plan" in r and "started" in r:
            r["start_to_plan"] = r["plan"] - r["started"]
    for key in ("first", "started", "plan", "start_to_plan", "end"):
        xs = [r[key] for r in ok if key in r]
        out[key] = {
            "n": len(xs),
            "p50": pct(xs, 50),
            "p99": pct(xs, 99),
            "mean": round(statistics.fmean(xs), 4) if xs else None,
        }
    out["status"] = {}
    for r in results:
        out["status"][r.get("status", "none")] = out["status"].get(r.get("status", "none"), 0) + 1
    out["retries_429"] = sum(r["retries"] for r in results)
    out["foreign_events"] = sum(r["foreign"] for r in results)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, default=8)
    ap.add_argument("--tasks", type=int, default=100)
    ap.add_argument("--baseline", type=int, default=8)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--queue", type=int, default=4)
    ap.add_argument("--no-kill", action="store_true")
    ap.add_argument("--limit-s", type=float, default=1500.0, help="stop the run after this")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    if not (1 <= a.sessions <= 64 and 1 <= a.tasks <= 1000 and 1 <= a.workers <= 16):
        ap.error("--sessions 1..64, --tasks 1..1000, --workers 1..16")
    runs = Path(tempfile.mkdtemp(prefix="bench-serve-"))
    args = [
        "--llm",
        "rules",
        "--workers",
        str(a.workers),
        "--queue",
        str(a.queue),
        "--rate",
        "200",
        "--max-sessions",
        str(a.sessions + 4),
    ]
    timer = threading.Timer(a.limit_s, lambda: os._exit(124))  # bounded in time, always
    timer.daemon = True
    timer.start()
    with running_server(runs, *args, log=runs / "serve.log") as base:
        server_pid = int(
            next(p.pid for p in psutil.Process().children() if "serve" in " ".join(p.cmdline()))
        )
        mem = Memory(server_pid)
        start_mb = mem.rss_mb()
        mem.start()
        base_phase = phase(base, 1, a.baseline, None)
        load = phase(base, a.sessions, a.tasks, None if a.no_kill else a.tasks // 2)
        mem.stop.set()
        c = Client(base)
        health = c.http.get("/health").json()
        c.close()
    timer.cancel()
    b, ld = stats(base_phase["results"]), stats(load["results"])
    killed = [r for r in load["results"] if r.get("killed")]
    # a refusal or a safe stop is the robot's own verdict on its scene; what the kill must
    # not cause is an error (or a lost result) in any other task
    others_failed = [
        r for r in load["results"] if not r.get("killed") and r.get("status") in ("error", None)
    ]
    mb = [m for _, m in mem.samples] or [start_mb]
    half = len(mb) // 2
    report = {
        "sessions": a.sessions,
        "tasks": a.tasks,
        "workers": a.workers,
        "baseline": {**b, "wall_s": base_phase["wall_s"], "tasks": a.baseline},
        "load": {**ld, "wall_s": load["wall_s"], "tasks_per_s": round(a.tasks / load["wall_s"], 3)},
        "ratio_p50_plan_load_to_baseline": round(ld["plan"]["p50"] / b["plan"]["p50"], 2)
        if ld["plan"]["p50"] and b["plan"]["p50"]
        else None,
        "ratio_p50_first_load_to_baseline": round(ld["first"]["p50"] / b["first"]["p50"], 2)
        if ld["first"]["p50"] and b["first"]["p50"]
        else None,
        "memory_mb": {
            "start": round(start_mb, 1),
            "max": round(max(mb), 1),
            "max_first_half": round(max(mb[: max(1, half)]), 1),
            "max_second_half": round(max(mb[half:] or mb), 1),
            "end": round(mb[-1], 1),
        },
        "killed_worker": {
            "killed_tasks": len(killed),
            "killed_status": [r.get("status") for r in killed],
            "killed_error": [r.get("error") for r in killed],
            "other_tasks_failed": len(others_failed),
            "restarts": health.get("restarts"),
        },
        "checks": {
            "no_cross_session_events": ld["foreign_events"] == 0 and b["foreign_events"] == 0,
            "killed_worker_failed_only_its_task": (
                a.no_kill or (len(killed) == 1 and killed[0].get("status") == "error")
            )
            and not others_failed,
        },
    }
    if a.json:
        print(json.dumps(report, indent=2))
    else:
        for k, v in report.items():
            print(f"{k}: {json.dumps(v)}")
    return 0 if all(report["checks"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
