"""``skillbridge skills``: the skill library and its shipped policies."""

from __future__ import annotations

import json

import typer
from rich.table import Table

from skillbridge.cli.common import console


def register(app: typer.Typer) -> None:
    app.command("skills")(skills)


def skills(as_json: bool = typer.Option(False, "--json", help="Print JSON.")):
    """The skill catalogue: parameters, preconditions, shipped success rate."""
    from skills.policy import PolicyError, load_manifest, pretrained_dir
    from skills.registry import catalogue

    rows = []
    for entry in catalogue():
        try:
            m = load_manifest(pretrained_dir(entry["skill"]))
            ev = m.get("evaluation") or {}
            shipped = {
                "success_rate": ev.get("success_rate"),
                "episodes": ev.get("episodes"),
                "ci95": ev.get("ci95"),
                "training_steps": m.get("training_steps"),
            }
        except PolicyError:
            shipped = None
        rows.append({**entry, "pretrained": shipped})
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    t = Table(title="skills")
    for col in ("skill", "parameters", "preconditions", "shipped success"):
        t.add_column(col)
    for r in rows:
        params = ", ".join(f"{k}: {v['domain']}" for k, v in r["parameters"].items()) or "-"
        s = r["pretrained"]
        if s is None:
            succ = "[red]no policy"
        elif s["success_rate"] is None:
            succ = "not evaluated"
        else:
            lo, hi = s["ci95"]
            succ = f"{s['success_rate']:.3f} (n={s['episodes']}, CI {lo:.2f}-{hi:.2f})"
        t.add_row(r["skill"], params, "\n".join(r["preconditions"]), succ)
    console.print(t)
