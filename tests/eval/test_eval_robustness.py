"""``eval`` loses nothing and stops cleanly (issue 10 B, D): a locked output folder, a
partial report on Ctrl-C or SIGTERM that ``--resume`` completes, lost workers retried and
never counted as robot failures, workers that do not outlive their parent, exit codes.

Signals are sent to real processes (a terminal's Ctrl-C reaches the whole process group);
the scripted experts stand in for the pretrained policies to keep episodes short.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli, sigint_default

ENTRY = "import sys; from skillbridge.cli import run; sys.argv[0] = 'skillbridge'; run()"
ROOT = Path(__file__).resolve().parents[2]

SUITE = """\
suite: tiny
tasks:
  - id: posed-pick-place
    instruction: put the red block in the green bin
    category: pick_place
    scene: {cubes: {red_block: [0.05, -0.12], blue_block: [-0.12, 0.05]}}
    goal:
      - in(red_block, green_bin)
      - not held(*)
  - id: no-ball
    instruction: put the ball in the red bin
    category: refuse
    refuse: true
    scene: {cubes: [red_block]}
"""


@pytest.fixture
def suite(tmp_path) -> Path:
    p = tmp_path / "tiny.yaml"
    p.write_text(SUITE)
    return p


def _eval_args(suite: Path, out: Path, seeds: int, workers: int, *extra: str) -> list[str]:
    return [
        "eval",
        "--suite",
        str(suite),
        "--seeds",
        str(seeds),
        "--workers",
        str(workers),
        "--out",
        str(out),
        "--policy-source",
        "scripted",
        *extra,
    ]


def _start(args: list[str]) -> subprocess.Popen:
    """The CLI in its own session, as a terminal would run it (own process group)."""
    env = {**os.environ, "MUJOCO_GL": os.environ.get("MUJOCO_GL", "egl")}
    return subprocess.Popen(
        [sys.executable, "-c", ENTRY, *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=sigint_default,
    )


def _wait_results(out: Path, n: int, proc: subprocess.Popen, timeout: float = 90) -> None:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        try:
            if len((out / "results.jsonl").read_text().splitlines()) >= n:
                return
        except OSError:
            pass
        if proc.poll() is not None:
            raise AssertionError(
                f"eval ended early ({proc.returncode}): {proc.stderr.read()[-2000:]}"
            )
        time.sleep(0.05)
    proc.kill()
    raise AssertionError(f"no {n} finished episode(s) in {timeout} s")


def _alive_in_group(pgid: int) -> list[str]:
    """Live (not zombie) processes of the process group, as 'pid cmd'."""
    alive = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] != "Z" and int(fields[2]) == pgid:
            alive.append(f"{d.name} {stat.split(')')[0]}")
    return alive


def _wait_group_gone(pgid: int, timeout: float) -> list[str]:
    t0 = time.monotonic()
    left = _alive_in_group(pgid)
    while left and time.monotonic() - t0 < timeout:
        time.sleep(0.1)
        left = _alive_in_group(pgid)
    return left


def _report(out: Path) -> dict:
    return json.loads((out / "report.json").read_text())


# ----------------------------------------------------------------------------- the folder
def test_out_folder_in_use_by_another_eval_is_refused(monkeypatch, capsys, tmp_path, suite):
    out = tmp_path / "rep"
    out.mkdir()
    with open(out / ".eval.lock", "a+") as held:  # what a running eval holds
        fcntl.flock(held.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        code, stdout, err = run_cli(monkeypatch, capsys, *_eval_args(suite, out, 1, 1, "--json"))
    assert code == 2, err
    assert "in use by another eval" in err and len(err.strip().splitlines()) == 1
    assert not (out / "report.json").exists() and not (out / "results.jsonl").exists()
    assert json.loads(stdout)["exit_code"] == 2  # --json: stdout is the error's one document


def test_two_evals_into_one_folder_at_once(tmp_path, suite):
    out = tmp_path / "rep"
    a = _start(_eval_args(suite, out, 1, 1, "--json"))
    _wait_results(out, 0, a)
    time.sleep(0.5)
    b = _start(_eval_args(suite, out, 1, 1, "--json"))
    (oa, ea), (ob, eb) = a.communicate(timeout=120), b.communicate(timeout=120)
    codes = sorted([a.returncode, b.returncode])
    assert codes == [0, 2], (ea, eb)
    loser = eb if b.returncode == 2 else ea
    assert json.loads(oa if a.returncode == 0 else ob)["episodes"] == 2  # stdout: JSON only
    assert "in use by another eval" in loser or "already holds a report" in loser
    assert _report(out)["episodes"] == 2 and _report(out)["complete"] is True


def test_new_eval_into_unfinished_folder_is_refused(monkeypatch, capsys, tmp_path, suite):
    out = tmp_path / "rep"
    out.mkdir()
    (out / "eval-state.json").write_text("{}")
    code, _, err = run_cli(monkeypatch, capsys, *_eval_args(suite, out, 1, 1))
    assert code == 2 and "--resume" in err and len(err.strip().splitlines()) == 1
    assert (out / "eval-state.json").read_text() == "{}"  # nothing of the old run lost


# ----------------------------------------------------------------------------- exit codes
def test_exit_1_when_every_episode_errors(monkeypatch, capsys, tmp_path, suite):
    from skillbridge.runner import runner

    def broken(self):
        raise RuntimeError("the simulator fell over")

    monkeypatch.setattr(runner.Runner, "run", broken)
    out = tmp_path / "rep"
    code, stdout, err = run_cli(monkeypatch, capsys, *_eval_args(suite, out, 1, 1, "--json"))
    assert code == 1, err
    summary = json.loads(stdout)
    assert summary["failures"]["by_cause"] == {"error": 2}
    assert summary["complete"] is True


def test_exit_1_when_a_target_is_missed(monkeypatch, capsys, tmp_path):
    wrong = tmp_path / "wrong.yaml"
    wrong.write_text(
        SUITE.replace("in(red_block, green_bin)", "in(red_block, blue_bin)").split(
            "  - id: no-ball"
        )[0]
    )
    code, stdout, err = run_cli(
        monkeypatch, capsys, *_eval_args(wrong, tmp_path / "rep", 1, 1, "--json")
    )
    assert code == 1, err
    t = json.loads(stdout)["targets"]
    assert t["execution"]["met"] is False
    assert t["refusal"]["met"] is None  # no refusal task: not a missed target


def test_help_and_docs_document_exit_codes(monkeypatch, capsys):
    code, out, _ = run_cli(monkeypatch, capsys, "eval", "--help")
    assert code == 0
    text = " ".join(out.replace("│", " ").split())
    for part in (
        "Exit status",
        "0 every episode ran",
        "1 a target is missed",
        "2 unusable input",
        "130 interrupted",
        "--resume",
    ):
        assert part in text, part
    page = (ROOT / "docs" / "EVALUATION.md").read_text()  # the eval's page in the docs
    assert "skillbridge eval" in page and "--resume" in page and "130" in page


# ----------------------------------------------------------------------------- Ctrl-C
def test_ctrl_c_keeps_finished_episodes_and_resume_completes(monkeypatch, capsys, tmp_path, suite):
    out = tmp_path / "rep"
    seeds = 12  # enough episodes that the eval cannot finish between the first and Ctrl-C
    total = 2 * seeds
    p = _start(_eval_args(suite, out, seeds, 1))
    _wait_results(out, 1, p)
    os.killpg(p.pid, signal.SIGINT)  # a terminal's Ctrl-C goes to the whole group
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    assert "Traceback" not in err
    lines = [ln for ln in err.splitlines() if "interrupted" in ln]
    assert len(lines) == 1 and f"--resume {out}" in lines[0], err
    rep = _report(out)
    assert rep["complete"] is False and 1 <= rep["episodes"] < total
    assert len(rep["missing"]) == total - rep["episodes"]
    assert "Incomplete" in (out / "report.md").read_text()
    before = {(r["task"], r["seed"]): r["episode"] for r in rep["results"]}

    code, stdout, err = run_cli(
        monkeypatch, capsys, "eval", "--resume", str(out), "--workers", "1", "--json"
    )
    assert code == 0, err
    summary = json.loads(stdout)
    assert summary["complete"] is True and summary["episodes"] == total
    assert not summary["missing"]
    after = {(r["task"], r["seed"]): r["episode"] for r in _report(out)["results"]}
    assert set(after) == {(t, s) for t in ("posed-pick-place", "no-ball") for s in range(seeds)}
    for key, ep in before.items():  # finished episodes kept, not run again
        assert after[key] == ep

    code, _, err = run_cli(monkeypatch, capsys, "eval", "--resume", str(out))
    assert code == 2 and "nothing to resume" in err


def test_resume_takes_the_settings_of_the_interrupted_eval(monkeypatch, capsys, tmp_path):
    code, _, err = run_cli(monkeypatch, capsys, "eval", "--resume", str(tmp_path), "--seeds", "5")
    assert code == 2 and "drop --seeds" in err
    code, _, err = run_cli(monkeypatch, capsys, "eval", "--resume", str(tmp_path))
    assert code == 2 and "no eval to resume" in err
    (tmp_path / "eval-state.json").write_text('{"format": "skillbridge.eval-state"}')
    code, _, err = run_cli(monkeypatch, capsys, "eval", "--resume", str(tmp_path))
    assert code == 2 and "damaged" in err and len(err.strip().splitlines()) == 1


@pytest.mark.slow
def test_real_ctrl_c_with_workers_prints_one_line(tmp_path, suite):
    out = tmp_path / "rep"
    p = _start(_eval_args(suite, out, 3, 2))
    _wait_results(out, 1, p)
    os.killpg(p.pid, signal.SIGINT)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert sum("interrupted" in ln for ln in err.splitlines()) == 1
    assert _report(out)["complete"] is False
    assert _wait_group_gone(p.pid, 5) == []


# ----------------------------------------------------------------------------- the parent
@pytest.mark.slow
def test_sigterm_of_the_parent_is_ctrl_c_and_stops_the_workers(tmp_path, suite):
    out = tmp_path / "rep"
    p = _start(_eval_args(suite, out, 3, 2))
    _wait_results(out, 1, p)
    os.kill(p.pid, signal.SIGTERM)  # the parent only: it must stop its workers itself
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    assert "Traceback" not in err
    assert _report(out)["complete"] is False
    assert _wait_group_gone(p.pid, 5) == []


@pytest.mark.slow
def test_sigkill_of_the_parent_leaves_no_workers_and_resume_works(
    monkeypatch, capsys, tmp_path, suite
):
    out = tmp_path / "rep"
    p = _start(_eval_args(suite, out, 3, 2))
    _wait_results(out, 1, p)
    assert len(_alive_in_group(p.pid)) >= 3  # parent, workers, multiprocessing's helper
    os.kill(p.pid, signal.SIGKILL)
    p.communicate(timeout=30)
    assert _wait_group_gone(p.pid, 10) == []
    assert not (out / "report.json").exists()
    code, stdout, err = run_cli(
        monkeypatch, capsys, "eval", "--resume", str(out), "--workers", "1", "--json"
    )
    assert code == 0, err
    assert json.loads(stdout)["episodes"] == 6


# ----------------------------------------------------------------------------- workers
@pytest.mark.slow
def test_kill_9_of_a_worker_is_retried_not_counted(tmp_path, suite):
    out = tmp_path / "rep"
    p = _start(_eval_args(suite, out, 3, 2, "--json"))
    _wait_results(out, 1, p)
    kids = [d for d in Path("/proc").iterdir() if d.name.isdigit()]
    workers = []
    for d in kids:
        try:
            stat = (d / "stat").read_text().rsplit(")", 1)[1].split()
            cmd = (d / "cmdline").read_bytes()
        except OSError:
            continue
        if int(stat[1]) == p.pid and b"spawn_main" in cmd:
            workers.append(int(d.name))
    assert workers
    os.kill(workers[0], signal.SIGKILL)
    stdout, err = p.communicate(timeout=180)
    assert p.returncode == 0, err
    summary = json.loads(stdout)
    assert summary["complete"] is True and summary["episodes"] == 6
    assert summary["failures"]["by_cause"] == {}
    assert summary["overall"]["execution"]["rate"] == 1.0
    infra = summary["infrastructure"]  # the loss happened, and is reported apart
    assert infra["pool_restarts"] >= 1 and infra["jobs_rerun"] >= 1
    assert "worker process was lost" in (out / "report.md").read_text()


@pytest.mark.slow
def test_a_job_that_always_kills_its_worker_is_given_up_after_bounded_retries(monkeypatch):
    from skillbridge.evaluation import pool as ev
    from tests.eval import _crashy  # importable by name in spawned workers (sys.path is passed)

    monkeypatch.setattr(ev, "run_job", _crashy.run_job)
    jobs = [{"n": 0}, {"n": 1, "crash": True}, {"n": 2}, {"n": 3}]
    stats: dict = {}
    results, lost = ev.run_jobs(jobs, workers=2, stats=stats)
    assert list(lost) == [1] and "worker lost 3 times" in lost[1]
    assert stats["pool_restarts"] == ev.MAX_ATTEMPTS  # a worker replaced per death
    assert stats["jobs_rerun"] == ev.MAX_ATTEMPTS  # only the crashing job paid: no other
    assert [r and r["n"] for r in results] == [0, None, 2, 3]


def test_a_full_disk_is_one_line_and_resumable(monkeypatch, capsys, tmp_path, suite):
    import errno

    from skillbridge.evaluation import run as ev

    def full(report, out):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(ev, "write_report", full)
    out = tmp_path / "rep"
    code, _, err = run_cli(monkeypatch, capsys, *_eval_args(suite, out, 1, 1, "--json"))
    assert code == 1
    assert len(err.strip().splitlines()) == 1, err
    line = err.strip()
    assert "No space left on device" in line and f"--resume {out}" in line
    assert "Traceback" not in err
    assert len((out / "results.jsonl").read_text().splitlines()) == 2  # nothing lost
    monkeypatch.undo()
    code, stdout, err = run_cli(monkeypatch, capsys, "eval", "--resume", str(out), "--json")
    assert code == 0, err
    assert json.loads(stdout)["episodes"] == 2
