"""``skillbridge serve``: the robot as an HTTP service and a web page (FastAPI, uvicorn)."""

from __future__ import annotations

from pathlib import Path

import typer

from skillbridge.errors import UserError


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)


def serve(
    host: str = typer.Option(
        "127.0.0.1", "--host", help="Address to bind; anything but loopback needs --token."
    ),
    port: int = typer.Option(8000, "--port", min=0, max=65535, help="Port (0: any free one)."),
    token: str = typer.Option(
        None,
        "--token",
        envvar="SKILLBRIDGE_TOKEN",
        help="Bearer token every API request must carry (at least 16 characters).",
    ),
    llm: str = typer.Option(
        None, "--llm", help="Planner of every session (as `run --llm`; rules is fastest)."
    ),
    runs: Path = typer.Option(Path("runs"), "--runs", help="Folder of the episodes."),
    workers: int = typer.Option(2, "--workers", help="Worker processes (tasks at once)."),
    queue: int = typer.Option(16, "--queue", help="Tasks that may wait for a worker."),
    max_sessions: int = typer.Option(64, "--max-sessions", help="Sessions open at most."),
    task_timeout: float = typer.Option(
        300.0, "--task-timeout", help="Seconds a task may run before it is stopped."
    ),
    answer_wait: float = typer.Option(
        120.0, "--answer-wait", help="Seconds the robot waits for the answer to its question."
    ),
    max_body: int = typer.Option(65536, "--max-body", help="Request body bytes at most."),
    rate: float = typer.Option(20.0, "--rate", help="Requests per second per client."),
    ready_file: Path = typer.Option(
        None, "--ready-file", hidden=True, help="Write 'host port' here once serving (tests)."
    ),
    policy_source: str = typer.Option("pretrained", "--policy-source", hidden=True),
):
    """Serve the robot over HTTP: sessions, messages, live events and the web page at /."""
    try:
        import uvicorn

        from skillbridge.service.app import create_app
        from skillbridge.service.config import ServiceConfig
    except ImportError as e:
        raise UserError(
            f"serve needs the service extra ({e.name} is missing): "
            "pip install 'skillbridge[serve]'",
            2,
        ) from None
    cfg = ServiceConfig(
        host=host,
        port=port,
        token=token,
        llm=llm,
        runs=runs,
        workers=workers,
        queue=queue,
        max_sessions=max_sessions,
        task_timeout_s=task_timeout,
        answer_wait_s=answer_wait,
        max_body=max_body,
        rate=rate,
        rate_burst=max(1, int(rate * 3)),
        policy_source=policy_source,
    ).check()
    if llm is not None:
        from planner.errors import PlannerError
        from planner.hybrid import HybridPlanner

        try:
            HybridPlanner.from_spec(llm)  # a bad --llm is one line now, not per task
        except PlannerError as e:
            raise UserError(str(e).splitlines()[0], 2) from None
    try:
        runs.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UserError(f"cannot use --runs {runs}: {e.strerror or e}", 2) from None
    config = uvicorn.Config(
        create_app(cfg), host=host, port=port, log_level="warning", lifespan="on"
    )
    server = uvicorn.Server(config)
    if ready_file is not None:
        _announce(server, ready_file)
    server.run()


def _announce(server, path: Path) -> None:
    """Write the bound address to ``path`` once the server listens (a test's free port)."""
    import threading
    import time

    def watch() -> None:
        while not server.started:
            if server.should_exit:
                return
            time.sleep(0.05)
        sock = server.servers[0].sockets[0].getsockname()
        tmp = path.with_suffix(".tmp")
        tmp.write_text(f"{sock[0]} {sock[1]}\n")
        tmp.replace(path)

    threading.Thread(target=watch, daemon=True).start()
