"""The console entry point: exit codes and one-line errors, through a real process."""

import subprocess
import sys

import pytest

ENTRY = "import sys; from skillbridge.cli import run; sys.argv[0] = 'skillbridge'; run()"


def cli(*args):
    return subprocess.run(
        [sys.executable, "-c", ENTRY, *args], capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize(
    "args, code",
    [
        (["--version"], 0),
        (["plan", "put the red block in the green bin", "--json"], 0),
        (["plan", "put the purple block in the green bin"], 1),  # refused
        (["nosuchverb"], 2),
        (["train", "fly"], 2),
        (["replay", "/no/such/episode"], 2),
    ],
)
def test_exit_codes(args, code):
    r = cli(*args)
    assert r.returncode == code, (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr


def test_user_error_is_one_line():
    r = cli("eval-skill", "fly", "-n", "1")
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1 and "unknown skill 'fly'" in r.stderr
