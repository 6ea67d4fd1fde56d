"""Long-horizon chains: five instructions run back to back without reset (CALVIN's protocol
on our scene).

A chain is sampled from a task graph before anything runs: from one start, each next
instruction must be doable in the world the previous ones are *predicted* to leave (the
rules planner plans it with certainty and the bridge accepts the plan in that predicted
world), and its goal must not hold there already. Each instruction then runs as its own
episode that starts from the state the previous one ended in, judged by its goal on the
world from physics. A chain stops at its first failure; its completed length (0-5) is the
number of instructions done before it, and the report gives their average, the success at
each position with Wilson intervals, and what the failures were.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bridge.goals import goal_holds, unmet
from bridge.validate import validate
from planner import kinds, rules
from planner.hybrid import HybridPlanner
from sim import scene, scenes
from sim.env import TabletopEnv
from sim.util import atomic_path, atomic_write_text, wilson
from sim.world import WorldState
from skillbridge.runner.executor import make_executor
from skillbridge.runner.records import RunConfig
from skillbridge.runner.runner import Runner

#: Instructions per chain (CALVIN's five).
CHAIN_LENGTH = 5
#: Starts tried before a chain of the full length is given up on.
MAX_RESAMPLE = 20
REPORT_FORMAT = "skillbridge.chains-report"
#: The issue's target for the average completed length of 5-chains.
TARGET = 4.7


@dataclass(frozen=True)
class Instruction:
    """One link: the words a user would type and the goal its run is judged by."""

    text: str
    goal: tuple[str, ...]
    kind: str


def _color(name: str) -> str:
    return name.split("_")[0]


def candidates(world: WorldState) -> list[Instruction]:
    """Every instruction of the task graph whose goal does not already hold in ``world``
    (whether it is doable there is the planner's and the bridge's to say)."""
    out: list[Instruction] = []
    cubes = [o.name for o in world.objects if not o.fallen]
    for c in cubes:
        it = kinds.phrase(c, world)  # "the red block" (in the mixed scene "the yellow ball")
        for b in world.bin_names:
            out.append(Instruction(f"put {it} in the {_color(b)} bin", (f"in({c}, {b})",), "bin"))
        for d in cubes:
            if d != c:
                out.append(
                    Instruction(
                        f"stack {it} on {kinds.phrase(d, world)}",
                        (f"on({c}, {d})",),
                        "stack",
                    )
                )
        for r in world.region_names:
            where = r.replace("table_", "")
            out.append(
                Instruction(f"push {it} to the {where} of the table", (f"at({c}, {r})",), "push")
            )
        if world.drawer is not None:
            out.append(
                Instruction(
                    f"put {it} in the drawer",
                    (f"in({c}, {world.drawer.name})",),
                    "drawer_place",
                )
            )
    if world.drawer is not None:
        d = world.drawer.name
        out.append(Instruction("open the drawer", (f"open({d})",), "open_drawer"))
        out.append(Instruction("close the drawer", (f"closed({d})",), "close_drawer"))
    if world.light_on is not None:
        out.append(Instruction("turn on the light", ("light_on",), "light"))
        out.append(Instruction("turn off the light", ("not light_on",), "light"))
    return [i for i in out if not goal_holds(i.goal, world)]


def doable(inst: Instruction, world: WorldState) -> WorldState | None:
    """The world the instruction is predicted to leave, when the rules planner plans it with
    certainty and the bridge accepts that plan with its goal met; else None."""

    # (read as the planner reads it: kind words by colour, the scene's names put back)
    r = rules.parse(kinds.spoken(inst.text, world), kinds.colour_view(world))
    if not r.confident or r.refuse or not r.steps:
        return None
    res = validate(kinds.scene_names(r.to_json(), world), world)
    if not res.accepted or res.predicted is None or not goal_holds(inst.goal, res.predicted):
        return None
    return res.predicted


def sample_chain(
    world: WorldState, rng: np.random.Generator, length: int = CHAIN_LENGTH
) -> list[Instruction] | None:
    """``length`` instructions valid in sequence from ``world`` (None if the graph runs out
    first). Kinds are drawn first, then an instruction of that kind, so that the many
    cube-to-bin pairs do not crowd out the drawer and the light."""
    chain: list[Instruction] = []
    for _ in range(length):
        by_kind: dict[str, list[Instruction]] = {}
        for inst in candidates(world):
            by_kind.setdefault(inst.kind, []).append(inst)
        kinds = sorted(by_kind)
        rng.shuffle(kinds)
        for kind in kinds:
            options = by_kind[kind]
            for j in rng.permutation(len(options)):
                nxt = doable(options[int(j)], world)
                if nxt is not None:
                    chain.append(options[int(j)])
                    world = nxt
                    break
            else:
                continue
            break
        else:
            return None
    return chain


@dataclass
class LinkResult:
    text: str
    goal: list[str]
    success: bool
    status: str
    cause: str | None = None
    unmet: list[str] = field(default_factory=list)
    episode: str | None = None
    wall_s: float = 0.0


@dataclass
class ChainResult:
    index: int
    seed: int
    instructions: list[str]
    links: list[LinkResult]

    @property
    def completed(self) -> int:
        return sum(1 for _ in _until_failure(self.links))


def _until_failure(links: list[LinkResult]):
    for link in links:
        if not link.success:
            return
        yield link


def _cause(status: str, refusal: bool, unmet: list[str]) -> str:
    if refusal:
        return "refused"
    if status == "success" and unmet:
        return "false_success"  # the run claimed success, the chain's goal is unmet
    if unmet and status in ("failed", "safe_stop"):
        return status
    return "goal_unmet" if unmet else status


def run_chain(
    index: int,
    seed: int,
    chain: list[Instruction],
    start_state: np.ndarray,
    *,
    out_dir: Path,
    scene_name: str,
    make_runner: Callable[..., Any],
) -> ChainResult:
    """Run the chain's instructions back to back from ``start_state``; stop at the first
    one whose goal is unmet in the world from physics."""
    links: list[LinkResult] = []
    state = start_state
    seen = None  # with --perception camera: what the robot believed at the last link's end
    for k, inst in enumerate(chain):
        t0 = time.perf_counter()
        r = make_runner(inst.text, seed, state, out_dir / f"chain-{index:04d}" / f"{k}")
        r.perception_prior = seen
        res = r.run()
        seen = r.env.perception if r.env is not None else None
        final = WorldState.model_validate(res.world)
        missing = unmet(inst.goal, final)
        ok = not missing and not res.refusal
        link = LinkResult(
            inst.text,
            list(inst.goal),
            ok,
            str(res.status),
            None if ok else _cause(str(res.status), bool(res.refusal), missing),
            missing,
            res.episode,
            round(time.perf_counter() - t0, 3),
        )
        links.append(link)
        if not ok:
            break
        # the state the episode closed with (its final.npz), still in the runner's env: no
        # need to read the whole episode back from disk
        assert r.env is not None
        state = r.env.get_state()
    return ChainResult(index, seed, [i.text for i in chain], links)


def summarise(results: list[ChainResult], length: int = CHAIN_LENGTH) -> dict:
    """Average completed length, success at each position (CALVIN's "k tasks in a row"),
    and the failure causes by instruction kind."""
    n = len(results)
    done = [r.completed for r in results]
    at = []
    for k in range(1, length + 1):
        s = sum(d >= k for d in done)
        lo, hi = wilson(s, n)
        at.append(
            {
                "position": k,
                "successes": s,
                "chains": n,
                "rate": s / n if n else None,
                "ci95": [round(lo, 4), round(hi, 4)],
            }
        )
    causes: Counter = Counter()
    kinds: Counter = Counter()
    for r in results:
        for link in r.links:
            if not link.success:
                causes[link.cause or "?"] += 1
                kinds[link.text.split(" the ")[0]] += 1
    return {
        "chains": n,
        "length": length,
        "average_completed": round(float(np.mean(done)), 4) if n else None,
        "completed_histogram": {str(k): done.count(k) for k in range(length + 1)},
        "success_at": at,
        "failure_causes": dict(causes.most_common()),
        "failures_by_verb": dict(kinds.most_common()),
        # a run that claimed success with the chain's goal unmet in the simulator
        "false_success_claims": causes.get("false_success", 0),
    }


def write_report(path: Path, config: dict, results: list[ChainResult], summary: dict) -> None:
    doc = {
        "format": REPORT_FORMAT,
        "version": 1,
        "config": config,
        "summary": summary,
        "chains": [{**asdict(r), "completed": r.completed} for r in results],
    }
    atomic_write_text(path, json.dumps(doc, indent=1) + "\n")


def start_world(env, seed: int, rng: np.random.Generator) -> tuple[np.ndarray, WorldState]:
    """A chain's start: every cube at random (the seed's layout), the arm at home; on the
    articulated scene the drawer shut or open and the light off or on, at random."""
    options: dict[str, Any] = {"cubes": list(env.object_names)}
    if scenes.get(env.scene).articulated:
        options["drawer"] = float(rng.choice([0.0, scene.DRAWER_TRAVEL]))
        options["light"] = bool(rng.random() < 0.5)
    env.reset(seed=seed, options=options)
    return env.get_state(), env.world_state()


def evaluate_chains(
    n: int,
    *,
    out: Path,
    seed_base: int = 0,
    scene_name: str = scene.DEFAULT_SCENE,
    llm: str | None = None,
    route: str = "hybrid",
    base_url: str | None = None,
    policy_source: str = "pretrained",
    max_replans: int = 2,
    length: int = CHAIN_LENGTH,
    progress: Callable[[int, ChainResult], None] | None = None,
    perception: str = "state",
) -> dict:
    """Sample and run ``n`` chains (chain ``i`` from seed ``seed_base + i``); write
    ``out/chains.json``; return the summary. The planner and the policies are loaded once."""
    planner = HybridPlanner.from_spec(llm, base_url=base_url, route=route)
    executor = make_executor(policy_source)

    def make_runner(task: str, seed: int, state: np.ndarray, folder: Path) -> Runner:
        folder.mkdir(parents=True, exist_ok=True)
        cfg = RunConfig(
            task=task,
            seed=seed,
            out_dir=folder,
            scene=scene_name,
            start_state=state,
            max_replans=max_replans,
            policy_source=policy_source,
            route=route,
        )
        return Runner(cfg, planner=planner, executor=executor, perception=perception)

    config = {
        "chains": n,
        "length": length,
        "seed_base": seed_base,
        "scene": scene_name,
        "planner": planner.spec,
        "route": route,
        "policy_source": policy_source,
        "max_replans": max_replans,
        "perception": perception,
    }
    env = TabletopEnv(scene=scene_name)
    results: list[ChainResult] = []
    t0 = time.perf_counter()
    try:
        for i in range(n):
            seed = seed_base + i
            rng = np.random.default_rng([seed, 5])
            for attempt in range(MAX_RESAMPLE):
                state, world = start_world(env, seed + 100_000 * attempt, rng)
                chain = sample_chain(world, rng, length)
                if chain is not None:
                    break
            else:
                raise RuntimeError(f"no chain of {length} instructions from seed {seed}")
            res = run_chain(
                i, seed, chain, state, out_dir=out, scene_name=scene_name, make_runner=make_runner
            )
            results.append(res)
            if progress is not None:
                progress(i, res)
    finally:
        env.close()
        summary = summarise(results, length)
        summary["wall_s"] = round(time.perf_counter() - t0, 1)
        write_report(out / "chains.json", config, results, summary)
    return summary


def chain_video(
    result: ChainResult,
    out: Path,
    *,
    strip: Path | None = None,
    speed: float = 2.0,
    width: int = 480,
    height: int = 360,
) -> int:
    """One video of a chain: each link's episode in turn, captioned ``k/5 <instruction>``;
    with ``strip``, also a PNG of the world after each link side by side (a picture that
    fits in a README where a video does not). Returns the number of frames."""
    import imageio.v2 as imageio

    from sim.video import VideoWriter
    from skillbridge.episodes.replay import iter_frames

    ends: list[np.ndarray] = []
    with VideoWriter(out, fps=int(round(1.0 / scene.CONTROL_DT))) as vw:
        for k, link in enumerate(result.links):
            if link.episode is None:
                continue
            mark = "ok" if link.success else "FAILED"
            prefix = f"{k + 1}/{len(result.instructions)} {link.text} [{mark}] | "
            last = None
            for frame in iter_frames(
                link.episode, speed=speed, width=width, height=height, prefix=prefix
            ):
                vw.append(frame)
                last = frame
            if last is not None:
                ends.append(last)
    if strip is not None and ends:
        step = 2  # every other pixel: five links side by side stay a small picture
        row = np.concatenate([f[::step, ::step] for f in ends], axis=1)
        with atomic_path(strip, suffix=".png") as tmp:
            imageio.imwrite(tmp, row)
    return vw.frames
