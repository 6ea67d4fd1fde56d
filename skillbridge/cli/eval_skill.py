"""``skillbridge eval-skill``: a skill's success rate, nominal or perturbed."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.table import Table

from skillbridge.cli.common import check_skill, console, progress_bar
from skillbridge.errors import UserError, safe


def _check_perception(perception: str, other_mode: bool) -> None:
    if perception not in ("state", "camera"):
        raise UserError(f"--perception must be state or camera, got {perception!r}")
    if perception == "camera" and other_mode:
        raise UserError("--perception camera goes with a single skill (not pick-place or --record)")


def _print_camera(result: dict) -> None:
    """The camera run's truth: its success on the simulator, false claims, pose error."""
    lo, hi = result["true_ci95"]
    err = result["perception_error_mm"]
    console.print(
        f"  camera perception: true success {result['true_success_rate']:.3f} "
        f"(95% CI {lo:.3f}-{hi:.3f}), false success claims "
        f"{result['false_success_claims']}; the estimate crossed into success "
        f"{result['crossings']} times ({result['false_at_crossing']} not true then), "
        f"claimed after the retreat where the images confirm it "
        f"({result['unconfirmed']} unconfirmed, {result['undone']} undone); "
        f"cube error p50 {err['p50']} mm, "
        f"p95 {err['p95']} mm, max {err['max']} mm"
    )


def register(app: typer.Typer) -> None:
    app.command("eval-skill")(eval_skill)


def eval_skill(
    skill: str = typer.Argument(..., help="Skill to evaluate, or 'pick-place' for the chain."),
    episodes: int = typer.Option(200, "-n", "--n-episodes", min=1, help="Episodes."),
    seed: int = typer.Option(0, "--seed", help="Seed of the start states."),
    policy_dir: Path = typer.Option(
        None,
        "--policy",
        "-f",
        help="Policy folder (default: pretrained); with pick-place --split, a folder "
        "holding pick/ and place/.",
    ),
    expert: bool = typer.Option(False, "--expert", help="Evaluate the scripted expert instead."),
    as_json: bool = typer.Option(
        False, "--json", help="Print one JSON object (progress goes to stderr)."
    ),
    record: bool = typer.Option(
        False, "--record", help="Store the result in the policy's manifest."
    ),
    replace: bool = typer.Option(
        False,
        "--replace",
        help="With --record: overwrite an evaluation the manifest already records.",
    ),
    split: str = typer.Option(
        None,
        "--split",
        metavar="SPLIT",
        help="nominal, perturbed or all: each condition of the perturbation split "
        "(skills/perturb.py), policy and scripted expert paired on the same starts; "
        "-n episodes per condition.",
    ),
    scene_name: str | None = typer.Option(
        None,
        "--scene",
        help="Run in this scene instead of the skill's own (tabletop, articulated or mixed): "
        "e.g. a tabletop skill beside the articulated scene's drawer and button.",
    ),
    kind: str = typer.Option(
        None,
        "--kind",
        help="Act on objects of this kind only (cube, cylinder, sphere): in the mixed scene "
        "unless --scene names another that holds one; the result gives each object's rate.",
    ),
    perception: str = typer.Option(
        "state",
        "--perception",
        help="Where the skill's view of the scene comes from: state (the simulator's "
        "poses) or camera (estimated from RGB-D images; success judged on the estimate, "
        "false claims counted on the truth).",
    ),
):
    """Success rate (95% Wilson interval) of a skill from its chained start distribution."""
    check_skill(skill, allow_chain=True)
    from skills.chain import CHAIN

    _check_perception(perception, skill == CHAIN or record)

    _check_expert(skill, expert, split)
    _check_scene(skill, scene_name, split)
    subjects, kind_scene = _kind_subjects(skill, kind, scene_name, split)
    scene_name = scene_name if not subjects else kind_scene
    if split is not None:
        _check_split(split, expert, record)
        _eval_split(
            skill, split, episodes, seed, policy_dir, as_json, perception, subjects, scene_name
        )
        return

    if skill == CHAIN and policy_dir is not None:
        raise UserError(
            f"-f/--policy does not apply to {CHAIN}: it chains the installed pick "
            "and place policies"
        )
    if expert and policy_dir is not None:
        raise UserError(
            "-f/--policy and --expert exclude each other (the expert has no policy folder)"
        )
    if record and (skill == CHAIN or expert):
        raise UserError(
            f"--record stores a policy's result in its manifest; "
            f"{'the expert' if expert else CHAIN} has none"
        )
    if replace and not record:
        raise UserError("--replace only goes with --record")
    import torch

    import sim  # noqa: F401
    from skills.chain import CHAIN, evaluate_chain
    from skills.evaluate import evaluate_policy, expert_policy
    from skills.policy import PolicyError, load_policy, pretrained_dir
    from skills.runtime import SkillExecutor
    from skills.skill_env import SkillEnv

    torch.set_num_threads(1)
    directory = policy_dir or (None if skill == CHAIN else pretrained_dir(skill))
    try:
        if skill == CHAIN:
            ex = SkillExecutor("scripted" if expert else "pretrained")
            ex.policy("pick") if not expert else None
            ex.policy("place") if not expert else None
        elif expert:
            policy = expert_policy
        else:
            policy, manifest = load_policy(directory, skill)
    except PolicyError as e:
        raise UserError(str(e)) from None
    previous = _recorded(Path(directory) / "manifest.json", skill, replace) if record else None
    # stdout carries the result only (one JSON object with --json): progress goes to stderr
    with progress_bar(Console(stderr=True) if as_json else None) as bar:
        task = bar.add_task(f"eval {skill}", total=episodes)
        hook = lambda ep, ok: bar.advance(task)  # noqa: E731
        if skill == CHAIN:
            result = evaluate_chain(ex, episodes, seed=seed, progress=hook)
        else:
            env = SkillEnv(skill, scene_name=scene_name) if scene_name else None
            if env is not None and subjects:
                env.sim.subjects = subjects
            result = evaluate_policy(
                skill, policy, episodes, seed=seed, env=env, progress=hook, perception=perception
            )
    if record and skill != CHAIN and not expert:
        from skills.policy import record_evaluation

        path = Path(directory) / "manifest.json"
        where = f" -f {policy_dir}" if policy_dir is not None else ""
        evaluation = {
            **result,
            "seed": seed,
            "command": f"skillbridge eval-skill {skill} -n {episodes} --seed {seed}{where}",
        }
        try:
            record_evaluation(directory, evaluation)
        except OSError as e:
            raise UserError(f"cannot record the result in {path}: {e.strerror or e}", 1) from None
        if previous:
            Console(stderr=True, highlight=False, soft_wrap=True).print(
                f"replaced the recorded evaluation in {safe(str(path))}: {safe(previous)} -> "
                f"{_figure(result, seed)}"
            )
    if as_json:
        typer.echo(json.dumps(result))
    else:
        _print_result(skill, episodes, result)


def _print_result(skill: str, episodes: int, result: dict) -> None:
    lo, hi = result["ci95"]
    console.print(
        f"{skill}: success {result['success_rate']:.3f} over {episodes} episodes "
        f"(95% CI {lo:.3f}-{hi:.3f}), mean steps {result['mean_steps']}"
    )
    if result.get("perception") == "camera":
        _print_camera(result)
    for kind, r in result.get("by_target", {}).items():
        console.print(
            f"  target {kind}: {r['success_rate']:.3f} over {r['episodes']} "
            f"(95% CI {r['ci95'][0]:.3f}-{r['ci95'][1]:.3f})"
        )


def _check_expert(skill: str, expert: bool, split: str | None) -> None:
    """``--expert`` and ``--split`` need the skill's scripted expert, which a skill learned by
    RL alone does not have."""
    from skills.chain import CHAIN
    from skills.registry import get

    if skill == CHAIN or not (expert or split is not None) or get(skill).has_expert:
        return
    raise UserError(
        f"{skill} has no scripted expert (it was learned by RL alone): "
        + ("drop --expert" if expert else "--split compares the policy with the expert")
    )


def _check_scene(skill: str, scene_name: str | None, split: str | None) -> None:
    """``--scene``: a known scene, one the skill can run in (the drawer's and the button's
    skills need the articulated scene), for the nominal rate of a single skill."""
    from sim.scene import DEFAULT_SCENE, SCENE_NAMES
    from skills.chain import CHAIN
    from skills.registry import get

    if scene_name is None:
        return
    if scene_name not in SCENE_NAMES:
        raise UserError(f"--scene must be one of {', '.join(SCENE_NAMES)}, not {scene_name!r}")
    if skill == CHAIN or split is not None:
        raise UserError("--scene applies to a single skill's nominal rate (no --split, no chain)")
    own = get(skill).scene
    if own != DEFAULT_SCENE and scene_name != own:
        raise UserError(f"{skill} needs the {own} scene (its {own} parts), not {scene_name}")


def _kind_subjects(
    skill: str, kind: str | None, scene_name: str | None, split: str | None
) -> tuple[tuple[str, ...], str | None]:
    """``--kind``: the objects of that kind in the scene the run uses (the mixed one where
    none is named), for a single skill that acts on an object, and that scene; no objects
    and ``scene_name`` as given without ``--kind``."""
    if kind is None:
        return (), scene_name
    from sim import objects, scenes
    from skills.chain import CHAIN
    from skills.registry import get

    if kind not in objects.KINDS:
        raise UserError(f"--kind must be one of {', '.join(objects.KINDS)}, not {kind!r}")
    if skill == CHAIN:
        raise UserError("--kind applies to a single skill (not the chain)")
    s = get(skill)
    if not (s.moves_object or s.grasps or s.releases):
        raise UserError(f"--kind: {skill} does not act on an object")
    where = scenes.get(scene_name or "mixed")
    names = tuple(o.name for o in where.objects if o.kind == kind)
    if not names:
        raise UserError(f"the {where.name} scene holds no {kind}")
    return names, where.name


def _check_split(split: str, expert: bool, record: bool) -> None:
    from skills.perturb import SPLITS

    if split not in SPLITS:
        raise UserError(f"--split must be one of {', '.join(SPLITS)}, not {split!r}")
    if expert:
        raise UserError(
            "--split already reports the scripted expert beside the policy: drop --expert"
        )
    if record:
        raise UserError("--record stores the nominal figure: run it without --split")


def _eval_split(
    skill: str,
    split: str,
    episodes: int,
    seed: int,
    policy_dir: Path | None,
    as_json: bool,
    perception: str = "state",
    subjects: tuple[str, ...] = (),
    scene_name: str | None = None,
) -> None:
    """``eval-skill SKILL --split ...``: a table of conditions, policy beside expert (with
    ``--kind``, in the mixed scene on objects of that kind). For
    the pick-place chain, ``-f DIR`` is a folder holding ``pick/`` and ``place/``. With
    ``--perception camera`` the policy alone, from images (false claims counted)."""
    import torch

    import sim  # noqa: F401
    from sim import scene
    from skills import perturb
    from skills.chain import CHAIN
    from skills.policy import PolicyError, load_policy, pretrained_dir
    from skills.registry import get
    from skills.runtime import SkillExecutor

    torch.set_num_threads(1)
    try:
        if skill == CHAIN:
            pols = {
                k: load_policy(Path(policy_dir) / k if policy_dir else pretrained_dir(k), k)[0]
                for k in ("pick", "place")
            }
            actors: dict[str, Any] = {
                "policy": SkillExecutor("pretrained", policies=pols),
                "expert": SkillExecutor("scripted"),
            }
            conds = perturb.chain_conditions(split)
        else:
            policy, _ = load_policy(policy_dir or pretrained_dir(skill), skill)
            s = get(skill)
            actors = {"policy": perturb.policy_actor(s, policy), "expert": perturb.expert_actor(s)}
            if perception == "camera":  # the policy from images (the expert: state mode's)
                del actors["expert"]
            conds = perturb.conditions_for(skill, split)
    except PolicyError as e:
        raise UserError(str(e)) from None
    with progress_bar(Console(stderr=True) if as_json else None) as bar:
        task = bar.add_task(f"eval {skill} ({split})", total=episodes * len(conds))
        hook = lambda c, ep: bar.advance(task)  # noqa: E731
        if skill == CHAIN:
            result = perturb.evaluate_chain_split(split, actors, episodes, seed, progress=hook)
        else:
            result = perturb.evaluate_split(
                skill,
                split,
                actors,
                episodes,
                seed,
                progress=hook,
                perception=perception,
                scene_name=scene_name if subjects and scene_name else scene.DEFAULT_SCENE,
                subjects=subjects,
            )
    if as_json:
        typer.echo(json.dumps(result))
        return
    t = Table(title=f"{skill}: {split} split, {episodes} episodes per condition, seed {seed}")
    cols = (
        "condition",
        "policy (95% CI)",
        "expert (95% CI)",
        "only pol/exp",
        "p (McNemar)",
        "aborted",
    )
    for col in cols:
        t.add_column(col)
    for r in result["conditions"]:
        p, ex, pr = r["policy"], r.get("expert"), r.get("paired", {})
        name = r["condition"] + ("" if r["feasible"] else " (infeasible)")
        ab = "-" if not p["aborted"] else f"{p['aborted']} @ step {p['mean_abort_steps']}"
        if p.get("false_success_claims"):
            ab += f"; {p['false_success_claims']} false claims"
        t.add_row(
            name,
            f"{p['successes']}/{p['episodes']} ({p['ci95'][0]:.2f}-{p['ci95'][1]:.2f})",
            "-"
            if ex is None
            else f"{ex['successes']}/{ex['episodes']} ({ex['ci95'][0]:.2f}-{ex['ci95'][1]:.2f})",
            f"{pr['policy_only']}/{pr['expert_only']}" if pr else "-",
            f"{pr['p_mcnemar']:.2g}" if "p_mcnemar" in pr else "-",  # exact, paired
            ab,
        )
    console.print(t)


def _figure(ev: dict, seed) -> str:
    rate = ev.get("success_rate")
    rate = f"{rate:.3f}" if isinstance(rate, (int, float)) else "?"
    return f"success {rate} (n={ev.get('episodes', '?')}, seed {seed})"


def _recorded(path: Path, skill: str, replace: bool) -> str | None:
    """The evaluation ``path`` already records, as text, checked before any episode runs: a
    --record must not clobber the shipped figures unasked, nor fail after the work."""
    try:
        m = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise UserError(f"cannot read {path}: {getattr(e, 'strerror', None) or e}") from None
    if not os.access(path.parent, os.W_OK):
        raise UserError(f"--record: cannot write to {path.parent}")
    ev = m.get("evaluation") if isinstance(m, dict) else None
    if not isinstance(ev, dict) or not ev:
        return None
    old = _figure(ev, ev.get("seed", "?"))
    if not replace:
        raise UserError(
            f"the manifest of {skill} ({path}) already records {old}; add --replace to overwrite it"
        )
    return old
