"""One real ``skillbridge serve`` for the service tests (its worker loads the policies
once): the rules planner, one worker, one task waiting at most."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    pytest.importorskip("fastapi")
    pytest.importorskip("sse_starlette")
    from skillbridge.service.client import running_server

    runs = tmp_path_factory.mktemp("serve-runs")
    log = runs.parent / "serve.log"
    with running_server(
        runs, "--llm", "rules", "--workers", "1", "--queue", "1", "--answer-wait", "30", log=log
    ) as base:
        yield base, runs
