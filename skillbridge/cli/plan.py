"""CLI verbs of the planner package: ``plan``."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from skillbridge.cli.common import CUBES_HELP, DRAWER_HELP, LIGHT_HELP, SCENE_FILE_HELP, SCENE_HELP
from skillbridge.errors import UserError, echo, safe


def register(app: typer.Typer) -> None:
    """Add this group's verbs to the top-level app."""
    app.command("plan")(plan)


def plan(
    task: str = typer.Argument(
        ..., help="The instruction, e.g. 'put the red block in the green bin'."
    ),
    llm: str = typer.Option(
        None,
        "--llm",
        help="PROVIDER:MODEL (embedded[:ADAPTER_DIR|URL], openai:, ollama:, anthropic:, "
        "local:PATH.gguf, rules); default: $SKILLBRIDGE_LLM, the config file, else the "
        "embedded model where it is installed, else rules.",
    ),
    base_url: str = typer.Option(
        None, "--base-url", help="Base URL of an OpenAI-compatible server."
    ),
    seed: int = typer.Option(0, "--seed", help="Scene seed."),
    cubes: str = typer.Option(None, "--cubes", help=CUBES_HELP),
    scene: str = typer.Option(None, "--scene", help=SCENE_HELP),
    drawer: str = typer.Option(None, "--drawer", help=DRAWER_HELP),
    light: str = typer.Option(None, "--light", help=LIGHT_HELP),
    scene_file: Path = typer.Option(None, "--scene-file", help=SCENE_FILE_HELP),
    route: str = typer.Option(
        "hybrid", "--route", help="hybrid (rules first, model if unsure), rules, or model."
    ),
    regenerations: int = typer.Option(2, "--regenerations", min=0, max=10, help="Regenerations."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
    explain: bool = typer.Option(False, "--explain", help="Say which route planned and why."),
):
    """Plan a task without executing it: the accepted plan, the attempts, the token counts.

    Exit 0 with a plan, nothing to do, an answer (a question about the world) or a stop;
    3 when the robot asks back which thing was meant (clarify); 1 when the task is refused or
    ends in a safe stop; 2 on bad input.
    """
    from planner.errors import PlannerError
    from planner.hybrid import ROUTES, HybridPlanner

    if not task.strip():
        raise UserError("the task is empty", 2)
    if route not in ROUTES:
        raise UserError(f"--route must be one of {', '.join(ROUTES)}, not {route!r}", 2)
    from skillbridge.cli.common import build_scene, spec_world

    spec = build_scene(
        seed=seed, scene=scene, cubes=cubes, drawer=drawer, light=light, scene_file=scene_file
    )
    world = spec_world(seed, spec)
    try:
        planner = HybridPlanner.from_spec(
            llm, base_url=base_url, route=route, max_regenerations=regenerations
        )
        outcome = planner.plan(task, world)
    except PlannerError as e:
        raise UserError(str(e), 2) from None
    except KeyboardInterrupt:
        # typer would turn it into a silent exit 130; say what happened, like `run` does
        raise UserError("interrupted", 130) from None
    from planner.llm import model_unused

    # the model never answered (unreachable, failing, not loadable): say so in one line
    notice = model_unused(
        outcome.attempts, outcome.decision, outcome.source, getattr(planner.llm, "name", None)
    )
    if notice is not None and notice.fatal and not as_json:
        raise UserError(notice.text, 2)
    if notice is not None and not notice.fatal:
        from skillbridge.errors import plain

        typer.echo(f"warning: {plain(notice.text)}", err=True)
    data = outcome.to_dict()
    data["spec"] = planner.spec
    data["seed"] = seed
    if notice is not None:
        data["model_unused"] = notice.text
    data["scene"] = {"model": spec.model, **(spec.reset_options() or {})}
    data["world"] = world.model_dump(mode="json")
    data["explanation"] = _explain(outcome, route, planner.llm is not None, _rules_chosen(llm))
    if as_json:
        echo(json.dumps(data, indent=2))
    else:
        _print(data)
        if explain:
            for line in data["explanation"]:
                echo(f"why: {line}")
    if notice is not None and notice.fatal:
        raise UserError(notice.text, 2)
    # like `run`: 0 for a plan, nothing to do, an answer or a stop; 3 when the robot asks
    # which thing was meant; 1 for a refusal or a safe stop
    from bridge.policy import Decision

    if outcome.decision == Decision.CLARIFY:
        raise typer.Exit(3)
    if outcome.decision in (Decision.SAFE_STOP, Decision.FAILED, Decision.REFUSED):
        raise typer.Exit(1)


def _rules_chosen(llm: str | None) -> bool:
    """Whether the rules planner was asked for (``--llm rules``, the environment, the
    config file) rather than the default where no model is installed."""
    from planner.backends import resolve_spec

    try:
        s = resolve_spec(llm)
    except Exception:  # noqa: BLE001 - the planner was built from the same spec already
        return False
    return s.provider == "rules" and s.origin != "default"


def _explain(outcome, route: str, has_model: bool, rules_chosen: bool = False) -> list[str]:
    """Which route planned and why, in plain sentences (also in the JSON)."""
    r = outcome.rules
    lines = []
    if route != "hybrid":
        lines.append(f"--route {route} forced the {outcome.route} route")
    elif outcome.route == "rules" and r.confident:
        lines.append("the rules planner understood every word, so no model was asked")
    elif outcome.route == "rules" and rules_chosen:
        lines.append("the rules planner did not understand it (the rules were chosen: no model)")
    elif outcome.route == "rules":
        lines.append("the rules planner did not understand it and no model is set up")
    else:
        notes = "; ".join(r.notes) or "not confident"
        lines.append(f"the rules planner was unsure ({notes}), so the model was asked")
    for a in outcome.attempts:
        a = a.to_dict() if hasattr(a, "to_dict") else a
        meta = a.get("meta") or {}
        if meta.get("command"):
            lines.append(f"{a['proposer']}#{a['attempt']} rewrote it as: {meta['command']!r}")
        codes = ",".join(x["code"] for x in a.get("reasons", [])) or "-"
        lines.append(f"{a['proposer']}#{a['attempt']}: bridge {a['decision']} ({codes})")
    if not has_model and not r.confident and not rules_chosen:
        from planner.hybrid import NO_MODEL_HINT

        lines.append(NO_MODEL_HINT)
    return lines


def _print(d: dict) -> None:
    from skillbridge.errors import console

    c = console()
    from bridge.policy import Decision

    colour = {
        Decision.ACCEPTED: "green",
        Decision.FALLBACK_ACCEPTED: "yellow",
        Decision.REFUSED: "magenta",
        Decision.NOTHING_TO_DO: "green",
        Decision.ANSWER: "cyan",
        Decision.CLARIFY: "cyan",
        Decision.STOP: "cyan",
    }.get(d["decision"], "red")
    c.print(
        f"[bold]{safe(d['decision'])}[/bold] by [bold]{safe(d['source'])}[/bold] "
        f"(route {safe(d['route'])}, planner {safe(d['spec'])}, trace {safe(d['trace_id'])})",
        style=colour,
        highlight=False,
    )
    if d.get("answer"):
        c.print(f"answer: {safe(d['answer'])}", highlight=False)
    if d.get("question"):
        c.print(f"question: {safe(d['question'])}", highlight=False)
    if d.get("refuse"):
        c.print(f"refused: {safe(d['refuse'])}", highlight=False)
    elif d.get("reason") and d["decision"] == "safe_stop":
        c.print(f"why: {safe(d['reason'])}", highlight=False)
    u = d.get("understanding") or {}
    for note in u.get("notes") or []:
        c.print(f"read: {safe(note)}", highlight=False)
    if u.get("constraints"):
        cons = u["constraints"]
        said = [*cons["objects"], *cons["targets"], *["->".join(p) for p in cons["pairs"]]]
        if said:
            c.print(f"forbidden: {safe(', '.join(said))}", highlight=False)
    for i, s in enumerate(d["steps"], 1):
        args = ", ".join(f"{k}={v}" for k, v in s.items() if k != "skill")
        c.print(f"  {i}. {safe(s['skill'])}({safe(args)})", highlight=False)
    c.print("attempts:")
    for a in d["attempts"]:
        codes = ",".join(r["code"] for r in a.get("reasons", [])) or "-"
        c.print(
            f"  {safe(a['proposer'])}#{a['attempt']}: {safe(a['decision'])} {safe(f'[{codes}]')} "
            f"{a['tokens_in']}+{a['tokens_out']} tokens, {a['latency_s'] * 1000:.0f} ms"
            + (
                f" (model loaded in {a['meta']['load_s']:.1f} s first)"
                if (a.get("meta") or {}).get("load_s")
                else ""
            ),
            highlight=False,
        )
    u = d["usage"]
    c.print(
        f"tokens: {u['tokens_in']} in, {u['tokens_out']} out; {u['calls']} call(s), "
        f"{u['retries']} retr{'y' if u['retries'] == 1 else 'ies'}, {u['latency_s']:.3f} s",
        highlight=False,
    )
