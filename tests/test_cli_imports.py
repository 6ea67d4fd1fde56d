"""What a verb's process imports (issue 25, cold start): ``plan`` imports its own verb's
module and not the others', and planning with the embedded model in process never imports
langchain (only a chat-model route needs it)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from skillbridge import cli

PROBE = """
import atexit, json, sys
atexit.register(lambda: sys.__stderr__.write("MODULES " + json.dumps(sorted(
    m for m in sys.modules if m.startswith(("langchain", "skillbridge.cli.", "transformers"))
)) + "\\n"))
sys.argv = ["skillbridge", *sys.argv[1:]]
from skillbridge.cli import run
run()
"""


def _modules(*args: str) -> tuple[int, list[str]]:
    p = subprocess.run(
        [sys.executable, "-c", PROBE, *args], capture_output=True, text=True, timeout=300
    )
    line = next(x for x in p.stderr.splitlines() if x.startswith("MODULES "))
    return p.returncode, json.loads(line[len("MODULES ") :])


def test_a_verb_imports_its_own_module_only():
    code, mods = _modules("plan", "put the red block in the green bin", "--llm", "rules")
    assert code == 0
    verbs = {m for m in mods if m.startswith("skillbridge.cli.")} - {"skillbridge.cli.common"}
    assert verbs == {"skillbridge.cli.plan"}, verbs
    assert not [m for m in mods if m.startswith("langchain")]


def test_the_embedded_route_never_imports_langchain():
    from planner.embedded.model import available

    if not available():
        pytest.skip("embedded model not installed (make install)")
    code, mods = _modules(
        "plan", "chuck the crimson cube into the emerald bin", "--llm", "embedded", "--json"
    )
    assert code == 0
    assert not [m for m in mods if m.startswith(("langchain", "transformers"))], mods


@pytest.mark.parametrize(
    "argv, verbs",
    [
        (["plan", "x"], ("plan",)),
        (["eval-skill", "pick"], ("eval_skill",)),
        (["--help"], cli.VERBS),
        ([], cli.VERBS),
        (["nosuch"], cli.VERBS),
        (["eval_skill"], cli.VERBS),  # not how the verb is spelled: typer's error, all verbs
    ],
)
def test_the_verbs_a_command_line_needs(argv, verbs):
    assert cli._verbs_for(argv) == verbs


def test_app_from_outside_has_every_verb():
    import typer

    names = set(typer.main.get_command(cli.app).commands)  # type: ignore[attr-defined]
    assert names >= {v.replace("_", "-") for v in cli.VERBS}
