"""The web page at ``/`` in a real headless Chromium (Debian's ``chromium``, driven by
playwright through its executable path; no browser is downloaded): a task typed in, frames
arriving, the robot's question answered, the plan and timeline filling in, stop pressed.

Set ``SKILLBRIDGE_SCREENSHOT=PATH`` to also save the page as a picture (docs/serve.png).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(CHROMIUM is None, reason="no chromium here (apt-get install chromium)"),
]

TASK = "put the block in the green bin"


@pytest.fixture
def page(server):
    sync = pytest.importorskip("playwright.sync_api")
    with sync.sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"], headless=True
        )
        pg = browser.new_page(viewport={"width": 1200, "height": 820})
        pg.goto(server[0] + "/?fps=25")  # a frame every step: the arm moves slower
        yield pg
        browser.close()


def test_type_a_task_answer_watch_and_stop(page):
    page.wait_for_selector("body[data-session]", timeout=30_000)
    page.wait_for_function("Number(document.getElementById('frame').dataset.frames || 0) > 0")
    page.fill("#text", TASK)
    page.click("#send")
    page.wait_for_selector("#question:not([hidden])", timeout=60_000)
    assert "Which block" in page.inner_text("#qtext")
    assert page.inner_text("#send") == "Answer"
    before = int(page.get_attribute("#frame", "data-frames") or 0)
    page.fill("#text", "the red one")
    page.press("#text", "Enter")
    page.wait_for_selector("#plan li", timeout=60_000)
    assert "pick(object=red_block)" in page.inner_text("#plan")
    page.wait_for_selector("#timeline li", timeout=60_000)
    page.wait_for_function(
        f"Number(document.getElementById('frame').dataset.frames) > {before}", timeout=30_000
    )
    shot = os.environ.get("SKILLBRIDGE_SCREENSHOT")
    if shot:
        Path(shot).parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=shot)
    page.click("#stop")
    page.wait_for_selector("#result[data-status]", timeout=60_000)
    assert page.get_attribute("#result", "data-status") == "stopped"
    assert "stop" in page.inner_text("#timeline")
    # the episode is listed, and replaying it brings its frames (a stop taken early leaves
    # only a few states to replay)
    page.wait_for_selector("#episodes li button", timeout=30_000)
    n = int(page.get_attribute("#frame", "data-frames") or 0)
    page.click("#episodes li button")
    try:
        page.wait_for_function(
            f"Number(document.getElementById('frame').dataset.frames) > {n} && "
            "document.getElementById('caption').textContent.startsWith('replay')",
            timeout=60_000,
        )
    except Exception:
        raise AssertionError(
            f"no replay frames; caption {page.inner_text('#caption')!r}, result "
            f"{page.inner_text('#result')!r}, turns {page.inner_text('#turns')!r}"
        ) from None
