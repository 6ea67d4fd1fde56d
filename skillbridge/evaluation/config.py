"""The settings of one eval, as the CLI gives them and ``--resume`` reads them back."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass
class EvalConfig:
    suite_path: str
    llm: str | None = None
    planner: str = "rules"  # the spec the planner resolved to (for the report)
    #: hybrid (rules first, the model when unsure), rules, or model
    route: str = "hybrid"
    seeds: int = 3
    seed_base: int = 0
    workers: int = 2
    out: Path = Path("runs/eval")
    policy_source: str = "pretrained"
    max_replans: int = 2
    base_url: str | None = None
    command: str = ""
    #: inject one seeded fault per episode (skillbridge.runner.faults.seeded) and report recovery
    faults: bool = False
    #: eval --ray: "local" (a Ray cluster started for this eval) or a cluster's address
    ray: str | None = None
    #: eval --perception: "state" (the simulator's poses) or "camera" (``sim.perception``;
    #: execution success is still judged on the simulator's truth, so a success perception
    #: claimed that the truth does not confirm is a false success claim)
    perception: str = "state"
