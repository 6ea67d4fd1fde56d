"""Property: whatever argv a user types, every verb answers with exit 0, 1 or 2 and never a
traceback (issue 10, "Also").

The generators mix each verb's real options with hostile values (negative, huge, NaN, rich
markup, escape sequences, devices, folders) and junk tokens. Nothing may train or run long:
for the verbs that would (``train``, ``eval``, ``demo``), one option that must be rejected is
always placed last, where it wins over any earlier copy of the same option; ``eval-skill``
runs at most one episode and never ``--record``. The fast variant draws a few examples per
verb; the ``slow`` one many more.
"""

from __future__ import annotations

import io
import os
import shutil
import sys

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tests.cli_helpers import run_cli  # noqa: E402

VERBS = (
    "run",
    "plan",
    "replay",
    "train",
    "eval-skill",
    "eval",
    "validate",
    "schema",
    "skills",
    "demo",
)

HOSTILE = st.sampled_from(
    [
        "-1",
        "0",
        "1",
        "2",
        "3",
        "100000",
        str(2**64),
        "1e999",
        "nan",
        "inf",
        "-inf",
        "1e-300",
        "",
        " ",
        "x",
        "[/x]",
        "[x, y]",
        "[bold]b[/bold]",
        "\x1b[2J",
        "\x1b]0;t\x07",
        "\u202e",
        "-",
        "--",
        "a" * 300,
        "rules",
        "openai:",
        "[/x]:y",
        "rules:extra",
        "{}",
        "[]",
        "null",
        '{"red_block": [0.1, 0.05]}',
        '{"red_block": null, "red_block": null}',
        "[" * 3000,
    ]
)
TEXT = st.text(max_size=16)
NUMBER = st.integers(-5, 10**6).map(str) | st.floats(allow_nan=True).map(str)
VALUE = HOSTILE | NUMBER | TEXT


def _paths(tmp: str):
    return (
        st.sampled_from(
            [
                f"{tmp}/new.mp4",
                f"{tmp}/new",
                tmp,
                "/dev/full",
                "/dev/null",
                "/",
                "/proc/self/mem",
                f"{tmp}/no/such/dir/x",
                f"{tmp}/[/x]/y.mp4",
                f"{tmp}/file.txt",
                f"{tmp}/fifo",
                f"{tmp}/ep",
                f"{tmp}/ep/meta.json",
                f"{tmp}/bad.yaml",
            ]
        )
        | TEXT
    )


def _opts(pool: dict, tmp: str):
    """A list of ``[flag, value]`` / ``[flag]`` drawn from ``pool`` (flag -> kind)."""

    def one(flag):
        kind = pool[flag]
        if kind == "flag":
            return st.just([flag])
        if kind == "path":
            return _paths(tmp).map(lambda v: [flag, v])
        if isinstance(kind, list):
            return (st.sampled_from(kind) | VALUE).map(lambda v: [flag, v])
        return VALUE.map(lambda v: [flag, v])

    return st.lists(st.sampled_from(sorted(pool)).flatmap(one), max_size=4).map(
        lambda xs: [t for x in xs for t in x]
    )


TASKS = (
    st.sampled_from(
        [
            "put the purple block in the green bin",
            "fly to the moon",
            "",
            "   ",
            "there is no [/red] block",
            "\x1b[2J\x1b]0;x\x07 go",
            "go home",
        ]
    )
    | TEXT
)
SKILLS = st.sampled_from(["pick", "place", "push", "home", "pick-place", "fly", ""]) | TEXT


def argv_for(verb: str, tmp: str):
    junk = st.one_of(st.just([]), st.just([]), st.lists(VALUE, min_size=1, max_size=2))
    paths = _paths(tmp)
    if verb == "run":
        pool = {
            "--llm": ["rules", "nosuch:x", "openai:"],
            "--seed": "v",
            "--out": "path",
            "--json": "flag",
            "--max-replans": ["0", "-1", "99"],
            "--cubes": "v",
            "--route": ["hybrid", "rules", "model", "x"],
            "--log-level": ["debug", "x"],
            "--video": "flag",
            "--policy-source": ["scripted", "magic"],
        }
        head = TASKS.map(lambda t: [t])
        tail = st.just(["--out", f"{tmp}/runs"])
    elif verb == "plan":
        pool = {
            "--llm": ["rules", "nosuch:x", "openai:"],
            "--seed": "v",
            "--json": "flag",
            "--cubes": "v",
            "--route": ["hybrid", "rules", "model", "x"],
            "--regenerations": ["0", "-1", "11"],
        }
        head = TASKS.map(lambda t: [t])
        tail = st.just([])
    elif verb == "replay":
        pool = {
            "--video": "path",
            "--verify": "flag",
            "--speed": ["4", "100", "0.001", "0"],
            "--no-timeline": "flag",
            "--json": "flag",
            "--viewer": "flag",
        }
        head = (st.sampled_from([f"{tmp}/ep", f"{tmp}/ep/meta.json"]) | paths).map(lambda p: [p])
        tail = st.just([])
    elif verb == "train":
        pool = {
            "--algo": ["ppo", "sac", "dqn"],
            "--seed": "v",
            "--n-envs": ["1", "0", "999"],
            "-f": "path",
            "-c": "path",
            "--resume": "flag",
            "--threads": ["1", "0"],
            "--tensorboard": "flag",
        }
        head = SKILLS.map(lambda s: [s])
        # last, so it wins: a step count (or config) that must be refused
        tail = st.sampled_from(
            [
                ["-n", "0"],
                ["-n", "-1"],
                ["-n", "x"],
                ["-n", str(10**12)],
                ["-c", f"{tmp}/bad.yaml"],
                ["-c", f"{tmp}/fifo"],
                ["--n-envs", "100000"],
            ]
        ).map(lambda t: ["-f", f"{tmp}/logs", *t])
    elif verb == "eval-skill":
        pool = {"--seed": "v", "-f": "path", "--expert": "flag", "--json": "flag"}
        head = SKILLS.map(lambda s: [s])
        tail = st.sampled_from([["-n", "0"], ["-n", "-1"], ["-n", "x"], ["-n", "1"]])
    elif verb == "eval":
        pool = {
            "--llm": ["rules", "nosuch:x"],
            "--json": "flag",
            "--out": "path",
            "--only": "v",
            "--suite": "path",
            "--policy-source": ["scripted", "x"],
        }
        head = st.just([])
        tail = st.sampled_from(
            [
                ["--seeds", "0"],
                ["--seeds", "-1"],
                ["--seeds", "1001"],
                ["--workers", "0"],
                ["--workers", "x"],
                ["--seed-base", "-1"],
                ["--only", "no-such-task-*"],
                ["--suite", "/dev/null"],
                ["--max-replans", "-1"],
            ]
        ).map(lambda t: ["--out", f"{tmp}/eval", *t])
    elif verb == "validate":
        pool = {
            "--seed": "v",
            "--world": "path",
            "--max-steps": ["1", "0", "101"],
            "--json": "flag",
        }
        head = (st.sampled_from(["-", f"{tmp}/plan.json"]) | paths).map(lambda p: [p])
        tail = st.just([])
    elif verb == "schema":
        pool = {"--seed": "v", "--world": "path", "--max-steps": ["1", "0", "101"]}
        head = st.just([])
        tail = st.just([])
    elif verb == "skills":
        pool = {"--json": "flag"}
        head = st.just([])
        tail = st.just([])
    elif verb == "demo":
        pool = {"--seed": "v", "--video": "path"}
        head = st.just([])
        tail = st.sampled_from(
            [
                ["-n", "0"],
                ["-n", "-1"],
                ["-n", "x"],
                ["-n", "100000"],
                ["--video", "/dev/full"],
                ["--video", tmp],
            ]
        )
    else:  # pragma: no cover
        raise AssertionError(verb)
    return st.tuples(head, _opts(pool, tmp), junk, tail).map(
        lambda t: [verb, *t[0], *t[1], *t[2], *t[3]]
    )


@pytest.fixture
def workspace(recorded, tmp_path, monkeypatch):
    """A scratch folder with an episode, a bad config, a FIFO and a plan file; the process
    works there, with no model keys, so nothing can reach the network or the repo."""
    shutil.copytree(recorded[1], tmp_path / "ep")
    (tmp_path / "bad.yaml").write_text("net_arch: [1e9]\n")
    (tmp_path / "file.txt").write_text("not a video")
    (tmp_path / "plan.json").write_text('{"steps": [{"skill": "home"}]}')
    os.mkfifo(tmp_path / "fifo")
    monkeypatch.chdir(tmp_path)
    for k in (
        "SKILLBRIDGE_LLM",
        "SKILLBRIDGE_CONFIG",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "ANTHROPIC_API_KEY",
        "DISPLAY",
        "WAYLAND_DISPLAY",
    ):
        monkeypatch.delenv(k, raising=False)
    return tmp_path


@pytest.fixture(scope="session")
def recorded(tmp_path_factory):
    from skillbridge.runner.records import RunConfig
    from skillbridge.runner.runner import Runner

    out = tmp_path_factory.mktemp("prop-runs")
    r = Runner(
        RunConfig(task="pick up the red block", seed=0, out_dir=out, policy_source="scripted")
    ).run()
    from pathlib import Path

    return r, Path(r.episode)


class _Hang(Exception):
    pass


def _alarm(signum, frame):
    raise _Hang("the command ran for more than 120 s")


def _check(argv, monkeypatch, capsys):
    import signal

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b'{"steps": [] [/x]')))
    capsys.readouterr()
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(120)
    try:
        code, out, err = run_cli(monkeypatch, capsys, *argv)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    if os.environ.get("SKILLBRIDGE_PROPERTY_TRACE"):
        print(
            f"PROP {code} {argv!r:.150} :: {(err.strip().splitlines() or [''])[-1][:120]}",
            file=sys.__stderr__,
        )
    assert code in (0, 1, 2), (argv, code, err[-2000:])
    assert "Traceback" not in err, (argv, err[-2000:])
    if code:
        assert err.strip() or out.strip(), argv


def _property(verb: str, examples: int):
    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize=not os.environ.get("SKILLBRIDGE_PROPERTY_RANDOM"),
        suppress_health_check=[
            HealthCheck.function_scoped_fixture,
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
        ],
    )
    @given(data=st.data())
    def prop(workspace, monkeypatch, capsys, data):
        argv = data.draw(argv_for(verb, str(workspace)), label="argv")
        _check(argv, monkeypatch, capsys)

    return prop


@pytest.mark.parametrize("verb", VERBS)
def test_random_argv_never_gives_a_traceback(verb, workspace, monkeypatch, capsys):
    _property(verb, int(os.environ.get("SKILLBRIDGE_PROPERTY_EXAMPLES", "15")))(
        workspace, monkeypatch, capsys
    )


@pytest.mark.slow
@pytest.mark.parametrize("verb", VERBS)
def test_random_argv_never_gives_a_traceback_many(verb, workspace, monkeypatch, capsys):
    _property(verb, 150)(workspace, monkeypatch, capsys)
