"""``skillbridge run``: a natural-language task, end to end, recorded."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from skillbridge.cli.common import (
    CUBES_HELP,
    DRAWER_HELP,
    LIGHT_HELP,
    SCENE_FILE_HELP,
    SCENE_HELP,
    build_scene,
    exit_with,
    run_scene,
    terminal_logging,
)
from skillbridge.errors import UserError, echo, safe
from skillbridge.errors import console as make_console


def register(app: typer.Typer) -> None:
    app.command("run")(run)


def run(
    task: str = typer.Argument(
        ..., help="The instruction, e.g. 'put the red block in the green bin'."
    ),
    llm: str = typer.Option(
        None,
        "--llm",
        help="Planner: PROVIDER:MODEL (embedded[:ADAPTER_DIR|URL], openai:, ollama:, "
        "anthropic:, local:PATH.gguf) or rules; default: $SKILLBRIDGE_LLM, the config file, "
        "else the embedded model where it is installed, else rules.",
    ),
    seed: int = typer.Option(0, "--seed", help="Scene seed (same seed, same episode)."),
    video_path: str = typer.Argument(
        None,
        hidden=True,
        metavar="VIDEO_PATH",
        help="With --video: where to write the mp4.",
    ),
    video: bool = typer.Option(
        False,
        "--video",
        help="Also render an mp4: `--video` (video.mp4 in the episode folder) or `--video PATH`.",
    ),
    out: Path = typer.Option(Path("runs"), "--out", help="Folder for the episode."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON result, no progress."),
    max_replans: int = typer.Option(2, "--max-replans", min=0, max=20, help="Replans on failure."),
    log_level: str = typer.Option("warning", "--log-level", help="Terminal log level."),
    cubes: str = typer.Option(None, "--cubes", help=CUBES_HELP),
    base_url: str = typer.Option(
        None, "--base-url", help="Base URL of an OpenAI-compatible server."
    ),
    route: str = typer.Option(
        "hybrid",
        "--route",
        help=(
            "hybrid: rules first, the model only when rules are unsure; rules or model: force one."
        ),
    ),
    scene: str = typer.Option(None, "--scene", help=SCENE_HELP),
    drawer: str = typer.Option(None, "--drawer", help=DRAWER_HELP),
    light: str = typer.Option(None, "--light", help=LIGHT_HELP),
    scene_file: Path = typer.Option(None, "--scene-file", help=SCENE_FILE_HELP),
    answer: list[str] = typer.Option(
        None,
        "--answer",
        help="Answer the robot's clarifying question in advance (repeatable, used in order), "
        "e.g. --answer 'the red one'. On a terminal it asks; without one and without an "
        "answer a question ends the run with exit 3 (the question in --json).",
    ),
    interject: list[str] = typer.Option(
        None,
        "--interject",
        metavar="STEP:TEXT",
        help="Say TEXT while the robot works, at control step STEP (repeatable; scripted "
        "corrections), e.g. --interject '20:not that one, the yellow one'.",
    ),
    perception: str = typer.Option(
        "state",
        "--perception",
        help="What the robot acts on: state (the simulator's poses) or camera (estimated "
        "from the cameras' RGB-D images; the episode still records the truth, and "
        "--json adds the perceived world and any false success claim under 'perception').",
    ),
    policy_source: str = typer.Option(
        "pretrained",
        "--policy-source",
        hidden=True,
        help="pretrained (shipped policies) or scripted (the experts; debugging aid).",
    ),
):
    """Run a natural-language task in simulation, recorded as an episode; exit 0 on success."""
    from skillbridge.runner.records import RunConfig
    from skillbridge.runner.runner import Runner

    if perception not in ("state", "camera"):
        raise UserError(f"--perception must be state or camera, got {perception!r}", 2)
    if video_path is not None and not video:
        raise UserError(
            f"unexpected argument {video_path!r} after the task "
            "(quote the task; for a video write --video PATH)",
            2,
        )
    spec = build_scene(
        seed=seed, scene=scene, cubes=cubes, drawer=drawer, light=light, scene_file=scene_file
    )
    console = make_console(stderr=as_json, soft_wrap=True)  # paths stay copyable
    terminal_logging(log_level, make_console(stderr=True))
    scripted = [_interjection(x) for x in interject or []]
    cfg = RunConfig(
        task=task,
        answers=list(answer or []) or None,
        interjections=scripted or None,
        llm=llm,
        seed=seed,
        max_replans=max_replans,
        out_dir=out,
        policy_source=policy_source,
        base_url=base_url,
        route=route,
        video=Path(video_path) if video and video_path else None,
        video_in_episode=video and not video_path,
        **run_scene(spec),  # the scene `plan` builds for the same flags
    )
    ui = None if as_json else _Progress(console)
    plans: list[dict] = []  # each negotiation, to say so when the model never answered

    def on_event(kind: str, d: dict) -> None:
        if kind == "plan":
            plans.append(d)
        if ui is not None:
            ui.event(kind, d)

    from planner.conversation import Conversation

    interactive = _terminal()
    conv = Conversation(answers=answer or (), wait_s=ANSWER_WAIT_S if interactive else 0.0)
    if interactive:
        _TerminalUser(conv, console, ui).start()
    if ui is not None:
        ui.interactive = interactive
    runner = Runner(cfg, on_event=on_event, conversation=conv, perception=perception)
    runner.prepare()
    try:
        result = runner.run()
    finally:
        if ui is not None:
            ui.stop()
    if as_json:
        d = result.to_dict()
        if runner.perception_report is not None:
            d["perception"] = runner.perception_report  # final_world stays the truth
        echo(json.dumps(d, indent=2, default=str))
    else:
        _summary(console, result)
        _perception_summary(console, runner.perception_report)
    _model_unused(runner, plans)
    if result.video_error:
        raise UserError(f"the run finished but the video failed: {result.video_error}", 1)
    exit_with(result.exit_code)


def _perception_summary(console, report: dict | None) -> None:
    """A camera run's one line: how far perception was off, and a false success claim."""
    if report is None:
        return
    err = report["max_position_error_mm"]
    line = f"perception: camera, largest cube error at the end {err} mm"
    if report["false_success"]:
        line += "; FALSE SUCCESS: the goal does not hold in the simulator"
    console.print(line, highlight=False)


#: How long a question on the terminal waits for its answer (s); then the run ends as
#: without one (exit 3).
ANSWER_WAIT_S = 300.0


def _interjection(spec: str) -> tuple[int, str]:
    """``STEP:TEXT`` of ``--interject``."""
    step, sep, text = spec.partition(":")
    if not sep or not step.strip().isdigit() or not text.strip():
        raise UserError(
            f"--interject takes STEP:TEXT (a control step, then what is said), not {spec!r}", 2
        )
    return int(step), text.strip()


def _terminal() -> bool:
    """Questions are asked only where someone can answer: stdin is a terminal."""
    import sys

    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (ValueError, OSError):
        return False


class _TerminalUser:
    """The person at the terminal: every line typed is posted to the conversation (from a
    reader thread), so it answers the robot's question when one is asked and is taken as a
    correction ("stop", "no, the blue bin") while the arm moves. The question is printed as
    it is asked; the end of input means nobody answers any more."""

    def __init__(self, conv, console, ui) -> None:
        self.conv, self.c, self.ui = conv, console, ui
        conv.subscribe(self.show)

    def show(self, turn) -> None:
        if turn.role == "robot" and turn.kind == "question":
            if self.ui is not None:
                self.ui.stop()
            self.c.print(f"[bold cyan]robot asks:[/bold cyan] {safe(turn.text)}", highlight=False)
            self.c.print("> ", end="")  # on stderr with --json: stdout stays one JSON document

    def start(self) -> None:
        import threading

        threading.Thread(target=self.read, name="terminal-user", daemon=True).start()

    def read(self) -> None:
        import sys

        from planner.conversation import ConversationClosed

        for line in sys.stdin:
            if not line.strip():
                continue
            try:
                self.conv.post(line)
            except ConversationClosed:
                return
            except ValueError:
                continue  # too long or a flood: not taken
        self.conv.close()


def _model_unused(runner, plans: list[dict]) -> None:
    """One line when the model never answered (unreachable, failing, not loadable): a
    warning when another planner planned instead, exit 2 when nothing could."""
    from planner.llm import model_unused

    name = getattr(getattr(runner.planner, "llm", None), "name", None)
    notices = [
        model_unused(p.get("attempt_records") or [], p["decision"], p.get("source"), name)
        for p in plans
    ]
    last = next((n for n in reversed(notices) if n is not None), None)
    if last is None:
        return
    if notices[-1] is not None and notices[-1].fatal:
        raise UserError(notices[-1].text, 2)
    from skillbridge.errors import plain

    typer.echo(f"warning: {plain(last.text)}", err=True)


def _no_op(s: dict) -> bool:
    """A ``home`` that had nothing to do (the safe stop from the home pose): not a failure."""
    from skills.base import NO_EFFECT

    skill = (s.get("subgoal") or {}).get("skill") or s.get("skill")
    return (
        not s.get("success")
        and skill == "home"
        and any(v.get("code") == NO_EFFECT for v in s.get("violations") or [])
    )


class _Progress:
    """Live terminal progress: the plan, each bridge decision, each skill's steps."""

    def __init__(self, console):
        self.c = console
        self.status = None
        #: questions are printed by the terminal prompt, not here
        self.interactive = False

    def interjection(self, d: dict) -> None:
        how = {"stopped": "stopped", "finished": "let finish its release", "idle": "taken"}
        self.c.print(
            f"[yellow]interjection[/yellow] at step {d.get('taken_step')}: subgoal "
            f"{how.get(str(d.get('mode')), d.get('mode'))}, "
            f"{safe(d.get('reading'))} → {safe(d.get('task') or 'stop')}",
            highlight=False,
        )

    def turn(self, d: dict) -> None:
        """A turn of the conversation as it is said."""
        who, act, text = d.get("role"), d.get("kind"), safe(d.get("text"))
        if act == "task" or (act == "question" and self.interactive):
            return
        if act == "answer" and self.interactive:
            return
        label = {
            "question": "[cyan]robot asks:[/cyan]",
            "answer": "[cyan]answer:[/cyan]",
            "message": "[yellow]user says:[/yellow]",
            "reply": "[cyan]robot says:[/cyan]",
            "ack": "[cyan]robot:[/cyan]",
            "stopped": "[yellow]robot:[/yellow]",
        }.get(str(act), f"{safe(who)}:")
        step = f" (step {d.get('step')})" if act == "message" else ""
        self.stop()
        self.c.print(f"  {label} {text}{step}", highlight=False)

    def stop(self):
        if self.status is not None:
            self.status.stop()
            self.status = None

    def event(self, kind: str, d: dict) -> None:  # noqa: C901 - one branch per event kind
        from skillbridge.episodes.episode import format_subgoal
        from skillbridge.runner.records import RunEvent

        c = self.c
        if kind == RunEvent.TURN:
            return self.turn(d)
        if kind == RunEvent.INTERJECTION:
            return self.interjection(d)
        if kind == RunEvent.START:
            c.print(
                f"[bold]task[/bold] {safe(d['task'])}  (seed {d['seed']}, planner "
                f"{safe(d['planner'])}, trace {safe(d['trace_id'])})",
                highlight=False,
            )
        elif kind == RunEvent.PLAN:
            from bridge.policy import AttemptDecision

            for a in d.get("attempt_records", []):
                codes = ", ".join(r["code"] for r in a.get("reasons", [])) or "ok"
                col = {AttemptDecision.ACCEPTED: "green", AttemptDecision.REFUSED: "magenta"}.get(
                    a["decision"], "red"
                )
                c.print(
                    f"  bridge: {safe(a['proposer'])}#{a['attempt']} "
                    f"[{col}]{safe(a['decision'])}[/{col}] ({safe(codes)}) "
                    f"{a['tokens_in']}+{a['tokens_out']} tok",
                    highlight=False,
                )
            steps = " → ".join(format_subgoal(s) for s in d["steps"]) or "(none)"
            c.print(
                f"[bold]plan {d['index'] + 1}[/bold] {safe(d['decision'])} by "
                f"{safe(d['source'])}: {safe(steps)}",
                highlight=False,
            )
            if d.get("refusal"):
                c.print(f"  [magenta]refused:[/magenta] {safe(d['refusal'])}", highlight=False)
        elif kind == RunEvent.SUBGOAL_START:
            self._label = safe(f"[{d['index'] + 1}] {format_subgoal(d['subgoal'])}")
            self.status = c.status(f"{self._label} running…")
            self.status.start()
        elif kind == RunEvent.PROGRESS and self.status is not None:
            self.status.update(f"{self._label} running… {d['steps']} steps")
        elif kind == RunEvent.SUBGOAL_END:
            self.stop()
            if _no_op(d):
                c.print(
                    f"  · {self._label} not needed: the arm is already at home", highlight=False
                )
                return
            mark = "[green]✓[/green]" if d["success"] else "[red]✗[/red]"
            why = "" if d["success"] else f" ({safe(d.get('reason'))})"
            c.print(
                f"  {mark} {self._label} {d['steps']} steps, {d['sim_time_s']:.2f} s sim{why}",
                highlight=False,
            )
        elif kind == RunEvent.REPLAN:
            c.print(f"[yellow]replan {d.get('replans')}[/yellow]", highlight=False)
        elif kind == RunEvent.FAULT:
            c.print(
                f"[yellow]fault injected:[/yellow] {safe(d.get('fault'))} "
                f"{safe(d.get('cube'))} ({safe(d.get('was'))})",
                highlight=False,
            )
        elif kind == RunEvent.GOAL_UNMET:
            c.print(
                "[yellow]goal unmet in the world:[/yellow] "
                f"{safe(', '.join(d.get('unmet') or []))}",
                highlight=False,
            )
        elif kind == RunEvent.STALE:
            c.print("[yellow]the rest of the plan no longer fits the world[/yellow]")
        elif kind == RunEvent.VIDEO_START:
            self.status = c.status(f"rendering {safe(d['path'])}…")
            self.status.start()
        elif kind == RunEvent.DONE:
            self.stop()


def _summary(c, r) -> None:
    from rich.table import Table

    from skillbridge.episodes.episode import format_subgoal

    t = Table(title=None, show_header=True, header_style="bold")
    for col in ("#", "subgoal", "result", "steps", "sim s", "wall s"):
        t.add_column(col, justify="right" if col in ("#", "steps", "sim s", "wall s") else "left")
    for s in r.subgoals:
        ok = s.get("success")
        failed = f"[red]failed[/red] {safe(s.get('reason') or '')}"
        t.add_row(
            str(s["index"] + 1),
            safe(format_subgoal(s["subgoal"])),
            "[green]success[/green]" if ok else "not needed (at home)" if _no_op(s) else failed,
            str(s.get("steps", 0)),
            f"{s.get('sim_time_s', 0):.2f}",
            f"{s.get('wall_s', 0):.2f}",
        )
    if r.subgoals:
        c.print(t)
    tm = r.timings
    split = ", ".join(
        f"{k} {tm.get(k, 0):.2f}"
        for k in ("planning", "bridge", "policy", "physics", "world", "recording")
    )
    ok = sum(1 for s in r.subgoals if s.get("success"))
    colour = "green" if r.success else "cyan" if r.exit_code != 1 else "red"
    c.print(f"[bold {colour}]{safe(r.status)}[/bold {colour}]: {safe(r.message)}", highlight=False)
    if r.question:
        c.print(f"robot asks: {safe(r.question)}", highlight=False)
    elif r.answer:
        c.print(f"robot says: {safe(r.answer)}", highlight=False)
    if r.goal_evaluation is not None:
        c.print(
            f"goal ({safe(r.goal_source)}), checked in the world after settling:", highlight=False
        )
        for e in r.goal_evaluation:
            mark = "[green]met[/green]  " if e["met"] else "[red]unmet[/red]"
            c.print(f"  {mark} {safe(e['predicate'])}", highlight=False)
    c.print(
        f"subgoals {ok}/{len(r.subgoals)} succeeded, replans {r.replans}, tokens "
        f"{r.tokens['in']} in / {r.tokens['out']} out ({r.tokens['calls']} planner calls)",
        highlight=False,
    )
    c.print(
        f"sim {r.sim_time_s:.2f} s in {tm.get('run_s', r.wall_s):.2f} s wall "
        f"(×{r.real_time_factor:.1f} real time); {split}",
        highlight=False,
    )
    c.print(f"episode: {safe(r.episode)}", highlight=False)
    if r.video:
        c.print(f"video:   {safe(r.video)} ({r.video_frames} frames)", highlight=False)
    c.print(f"replay:  skillbridge replay {safe(r.episode)} --verify", highlight=False)
