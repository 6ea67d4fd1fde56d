"""``eval --ray [ADDRESS]`` (issue 16): the suite's episodes as tasks on a (here local) Ray
cluster, the same records as ``--workers``, a worker killed mid-episode retried elsewhere."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli

ray = pytest.importorskip("ray")

ROOT = Path(__file__).resolve().parents[2]
ENTRY = "import sys; from skillbridge.cli import run; sys.argv[0] = 'skillbridge'; run()"
SUITE = """\
suite: tiny
tasks:
  - id: posed-pick-place
    instruction: put the red block in the green bin
    category: pick_place
    scene: {cubes: {red_block: [0.05, -0.12], blue_block: [-0.12, 0.05]}}
    goal:
      - in(red_block, green_bin)
  - id: no-ball
    instruction: put the ball in the red bin
    category: refuse
    refuse: true
    scene: {cubes: [red_block]}
"""
#: Fields of a record that differ between any two runs (wall time, the episode folder's
#: timestamped name); everything else must be identical.
VOLATILE = ("wall_s", "episode")


@pytest.fixture
def suite(tmp_path) -> Path:
    p = tmp_path / "tiny.yaml"
    p.write_text(SUITE)
    return p


@pytest.fixture(autouse=True)
def _quiet_ray(monkeypatch):
    monkeypatch.setenv("RAY_USAGE_STATS_ENABLED", "0")


def _args(suite: Path, out: Path, *extra: str) -> list[str]:
    return [
        "eval",
        "--suite",
        str(suite),
        "--seeds",
        "2",
        "--out",
        str(out),
        "--policy-source",
        "scripted",
        "--json",
        *extra,
    ]


def _records(out: Path) -> dict:
    recs = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    return {(r["task"], r["seed"]): {k: v for k, v in r.items() if k not in VOLATILE} for r in recs}


def test_bare_ray_means_a_local_cluster():
    from skillbridge.ray_cluster import LOCAL, rewrite_args

    assert rewrite_args(["--ray"]) == [f"--ray={LOCAL}"]
    assert rewrite_args(["--ray", "--json"]) == [f"--ray={LOCAL}", "--json"]
    assert rewrite_args(["--ray", "ray://head:10001"]) == ["--ray", "ray://head:10001"]
    assert rewrite_args(["--", "--ray"]) == ["--", "--ray"]


def test_unreachable_cluster_is_one_line(suite, tmp_path, monkeypatch, capsys):
    import socket

    with socket.socket() as s:  # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    args = _args(suite, tmp_path / "rep", "--ray", f"127.0.0.1:{port}")
    code, out, err = run_cli(monkeypatch, capsys, *args)
    assert code == 2 and f"Ray cluster at 127.0.0.1:{port}" in err, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


@pytest.mark.slow
def test_ray_records_match_the_process_pool(suite, tmp_path, monkeypatch, capsys):
    a, b = tmp_path / "pool", tmp_path / "ray"
    code, out, err = run_cli(monkeypatch, capsys, *_args(suite, a, "--workers", "2"))
    assert code == 0, err
    code, out, err = run_cli(monkeypatch, capsys, *_args(suite, b, "--ray", "--workers", "2"))
    assert code == 0, err
    assert json.loads(out)["episodes"] == 4
    assert _records(a) == _records(b)  # record for record, in the same report format
    rep = json.loads((b / "report.json").read_text())
    assert rep["config"]["ray"] == "local" and rep["complete"] is True
    base = json.loads((a / "report.json").read_text())
    assert rep["overall"] == base["overall"] and rep["targets"] == base["targets"]


@pytest.mark.slow
def test_killed_worker_job_is_retried_elsewhere_never_lost_or_doubled(tmp_path, monkeypatch):
    from skillbridge.evaluation import ray_jobs
    from skillbridge.ray_cluster import LOCAL

    monkeypatch.setenv(
        "PYTHONPATH",
        os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    )
    jobs = [
        {"n": 0},
        {"n": 1, "crash_once": str(tmp_path / "m1")},
        {"n": 2},
        {"n": 3, "always_crash": True},
        {"n": 4},
    ]
    stats: dict = {}
    seen: list[int] = []
    run = ray_jobs.ray_runner(LOCAL, "scripted", job_fn="tests.eval._ray_jobs:run_job")
    results, lost = run(jobs, 2, sink=lambda i, rec: seen.append(i), stats=stats)
    assert [r and r["n"] for r in results] == [0, 1, 2, None, 4]
    assert sorted(seen) == [0, 1, 2, 4]  # each result taken exactly once
    assert list(lost) == [3] and "worker lost 3 times" in lost[3]
    assert stats["jobs_rerun"] == 1 + 3 and stats["pool_restarts"] == 4


def _ray_workers_of(pid: int, title: bytes = b"ray::EpisodeWorker") -> list[int]:
    """Processes running our actor's episodes (or another Ray process title), descendants
    of ``pid``."""
    parent: dict[int, int] = {}
    cmds: dict[int, bytes] = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            parent[int(d.name)] = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            cmds[int(d.name)] = (d / "cmdline").read_bytes()
        except OSError:
            continue

    def below(p: int) -> bool:
        while p > 1:
            p = parent.get(p, 0)
            if p == pid:
                return True
        return False

    return [p for p, c in cmds.items() if title in c and below(p)]


#: Seeds per task of the kill test (two tasks).
KILL_SEEDS = 25


@pytest.mark.slow
def test_kill_9_of_a_ray_worker_mid_eval_is_retried_not_counted(suite, tmp_path):
    out = tmp_path / "rep"
    env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0")
    p = subprocess.Popen(
        [
            sys.executable,
            "-c",
            ENTRY,
            # enough episodes that workers are still busy once the first result is saved:
            # with the scripted source an episode takes a few tens of ms, and at 3 seeds
            # the whole eval was over before the test could find a worker to kill
            *_args(suite, out, "--ray", "--seeds", str(KILL_SEEDS), "--workers", "2"),
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 240
        victims: list[int] = []
        while time.monotonic() < deadline and p.poll() is None:
            res = out / "results.jsonl"
            if res.exists() and res.read_text().count("\n") >= 1:
                victims = _ray_workers_of(p.pid)
                if victims:
                    break
            time.sleep(0.2)
        assert victims, "no Ray worker found"
        os.kill(victims[0], signal.SIGKILL)
        stdout, err = p.communicate(timeout=300)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 0, err[-3000:]
    summary = json.loads(stdout)
    assert summary["complete"] is True and summary["episodes"] == 2 * KILL_SEEDS
    assert summary["failures"]["by_cause"] == {}
    assert summary["infrastructure"]["jobs_rerun"] >= 1
    keys = [
        (json.loads(x)["task"], json.loads(x)["seed"])
        for x in (out / "results.jsonl").read_text().splitlines()
    ]
    assert len(keys) == len(set(keys)) == 2 * KILL_SEEDS  # nothing lost, nothing twice


@pytest.mark.slow
def test_a_worker_that_cannot_start_is_one_line_not_retried_forever():
    from skillbridge.errors import UserError
    from skillbridge.evaluation import ray_jobs
    from skillbridge.ray_cluster import LOCAL

    run = ray_jobs.ray_runner(LOCAL, "scripted", job_fn="no_such_module:run_job")
    with pytest.raises(UserError, match="cannot start: ModuleNotFoundError: No module named"):
        run([{"n": 0}, {"n": 1}], 1, stats={})


def _start_and_wait_for_a_result(suite: Path, out: Path) -> subprocess.Popen:
    """``eval --ray`` in a child process, returned once it has saved its first episode."""
    env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0")
    p = subprocess.Popen(
        [sys.executable, "-c", ENTRY, *_args(suite, out, "--ray", "--seeds", "25")],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 240
    res = out / "results.jsonl"
    while time.monotonic() < deadline and p.poll() is None:
        if res.exists() and res.read_text().count("\n") >= 1:
            return p
        time.sleep(0.2)
    p.kill()
    raise AssertionError(f"no episode saved: {p.communicate()[1][-2000:]}")


@pytest.mark.slow
def test_sigterm_during_eval_ray_is_130_one_line_partial_report_no_lock(suite, tmp_path):
    """Ray's driver installs a crash handler for SIGTERM (a stack dump, abort, exit 134,
    no report): the eval's own handler is put back after ray.init."""
    out = tmp_path / "rep"
    p = _start_and_wait_for_a_result(suite, out)
    try:
        p.send_signal(signal.SIGTERM)
        stdout, err = p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 130, err[-3000:]
    lines = [x for x in err.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("interrupted:"), err[-3000:]
    rep = json.loads((out / "report.json").read_text())
    assert rep["complete"] is False and rep["episodes"] >= 1
    assert json.loads(stdout)["complete"] is False  # --json: still one document
    assert not (out / ".eval.lock").exists()


@pytest.mark.slow
def test_dead_ray_system_process_ends_eval_in_bounded_time_with_one_line(suite, tmp_path):
    """kill -9 of the runtime-env agent takes the raylet with it: the workers' restarts
    wait for a node forever. The eval notices the dead node, says so, keeps what it has."""
    out = tmp_path / "rep"
    p = _start_and_wait_for_a_result(suite, out)
    try:
        agents = _ray_workers_of(p.pid, b"ray::RuntimeEnvAgent")
        assert agents, "no runtime-env agent found"
        os.kill(agents[0], signal.SIGKILL)
        t0 = time.monotonic()
        stdout, err = p.communicate(timeout=120)
        waited = time.monotonic() - t0
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 1, err[-3000:]
    assert waited < 60
    lines = [x for x in err.splitlines() if x.strip()]
    assert len(lines) == 1 and "no live node" in lines[0] and "--resume" in lines[0], err[-3000:]
    rep = json.loads((out / "report.json").read_text())
    assert rep["complete"] is False and rep["episodes"] >= 1
    assert all("no live node" in m["reason"] for m in rep["missing"]), rep["missing"][:3]
    assert (out / "ray-events.log").exists()  # Ray's own messages, kept off the terminal
    assert not (out / ".eval.lock").exists()


@pytest.fixture
def token_head(tmp_path):
    """A real Ray head with token authentication (``ray start --head --block`` in its own
    session, stopped with its process group: no other Ray on the machine is touched)."""
    import socket

    ports = []
    for _ in range(2):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            ports.append(s.getsockname()[1])
    env = dict(os.environ, RAY_AUTH_MODE="token", RAY_USAGE_STATS_ENABLED="0")
    env.pop("RAY_AUTH_TOKEN", None)
    ray_bin = Path(sys.executable).with_name("ray")
    p = subprocess.Popen(
        [
            str(ray_bin),
            "start",
            "--head",
            "--block",
            f"--port={ports[0]}",
            f"--ray-client-server-port={ports[1]}",
            "--num-cpus=1",
            "--include-dashboard=false",
            "--disable-usage-stats",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        up = False
        while not up and time.monotonic() < deadline and p.poll() is None:
            try:
                for port in ports:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                up = True
            except OSError:
                time.sleep(0.5)
        assert up, f"the Ray head did not start (exit {p.poll()})"
        yield ports
    finally:
        os.killpg(p.pid, signal.SIGTERM)
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
        # `ray start` notes its cluster for every later ray.init() on the machine
        current = Path("/tmp/ray/ray_current_cluster")
        if current.is_file() and current.read_text().strip().endswith(f":{ports[0]}"):
            current.unlink()


@pytest.mark.slow
def test_a_refused_token_reaches_the_user_with_its_cause(token_head, suite, tmp_path, monkeypatch):
    """Ray said only "Failed to connect to Ray cluster" (GCS address) or "ray client
    connection timeout" (ray://): the refused token is what the user must hear."""
    gcs, client = token_head
    monkeypatch.setenv("RAY_AUTH_MODE", "token")
    monkeypatch.setenv("RAY_AUTH_TOKEN", "0" * 32)  # not the cluster's token
    for address in (f"127.0.0.1:{gcs}", f"ray://127.0.0.1:{client}"):
        out = tmp_path / f"rep-{address.replace(':', '_').replace('/', '')}"
        p = subprocess.run(
            [sys.executable, "-c", ENTRY, *_args(suite, out, "--ray", address)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=240,
        )
        assert p.returncode == 2, p.stderr[-3000:]
        lines = [x for x in p.stderr.splitlines() if x.strip()]
        assert len(lines) == 1, p.stderr[-3000:]
        assert f"cannot connect to the Ray cluster at {address}" in lines[0]
        assert "refused the token" in lines[0], lines[0]
        assert "authentication token" in lines[0].lower(), lines[0]  # Ray's own words


def test_failure_cause_names_a_refused_token_and_the_inner_cause():
    """Ray wraps the cause of a failed connection in "Failed to connect to Ray cluster at
    ..." (the GCS address) or "ray client connection timeout" (ray://)."""
    from skillbridge.ray_cluster import AUTH_HINT, failure_cause

    def wrapped(inner: str, outer: str) -> BaseException:
        try:
            try:
                raise RuntimeError(inner)
            except RuntimeError as c:
                raise ConnectionError(outer) from c
        except ConnectionError as e:
            return e

    gcs = wrapped(
        "Failed to connect to GCS. Last connection error: Traceback (most recent call last):\n"
        '  File "node.py", line 996\nray.exceptions.RpcError: Unauthenticated: RPC error: '
        "InvalidAuthToken: Authentication token is missing or incorrect. Ensure that...",
        "Failed to connect to Ray cluster at 10.0.0.1:6379",
    )
    why = failure_cause(gcs, [])
    assert why.startswith("the cluster refused the token (")
    assert "InvalidAuthToken: Authentication token is missing or incorrect); " in why
    assert why.endswith(AUTH_HINT)
    timeout = ConnectionError("ray client connection timeout")
    heard = ["Invalid or missing authentication token"]  # the client's debug log
    assert "(Invalid or missing authentication token)" in failure_cause(timeout, heard)
    other = wrapped("Traceback\n  File\nTimedOut: Timed out while waiting for GCS", "Failed")
    assert failure_cause(other, []) == "Failed: TimedOut: Timed out while waiting for GCS"
    assert failure_cause(timeout, []) == "ray client connection timeout"
