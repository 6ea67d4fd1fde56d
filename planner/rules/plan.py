"""The plan being built, clause by clause, and the symbolic scene it leaves behind."""

from __future__ import annotations

from dataclasses import dataclass, field

from planner.rules.lexing import Phrase
from planner.rules.result import Refuse, Unsure
from sim.world import WorldState
from skills.place import MAX_TOWER


@dataclass
class Plan:
    """The plan being built and the symbolic scene it leaves behind, clause by clause."""

    world: WorldState
    steps: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    held: str | None = None
    #: the blocks the previous clause named or moved: what "it"/"them" refer to
    last: list[str] = field(default_factory=list)
    #: where each block is, symbolically: a bin name, "on <cube>", "held", or None (table);
    #: so "all"/"each" skip blocks already where asked
    where: dict[str, str | None] = field(default_factory=dict)
    #: the goal so far: per block, where the instruction wants it last (insertion order)
    goal: dict[str, str] = field(default_factory=dict)
    home: bool = False
    #: False once a clause asks for something the goal grammar cannot say
    expressible: bool = True
    #: blocks a step of this plan has moved (a push "already done" is judged before)
    moved: set[str] = field(default_factory=set)
    #: the articulated scene's devices as the plan leaves them (None: not in this scene, or
    #: a drawer part way out, which is neither open nor closed)
    drawer_open: bool | None = None
    light: bool | None = None
    #: goals about the devices ("open(drawer)", "light_on"), after the blocks' goals
    device_goal: dict[str, str] = field(default_factory=dict)
    #: the device the previous clause was about ("open the drawer and put X in it")
    last_device: str | None = None

    @classmethod
    def start(cls, world: WorldState) -> Plan:
        held = world.held_object
        where = {
            o.name: o.in_bin or (f"on {o.on}" if o.on else None) or ("held" if o.held else None)
            for o in world.objects
        }
        d = world.drawer
        for o in world.objects:
            if d is not None and o.name in d.contents:
                where[o.name] = d.name
        return cls(
            world=world,
            held=held,
            last=[held] if held else [],
            where=where,
            # open, closed, or None: not in the scene, or part way out (neither)
            drawer_open=None if d is None or not (d.is_open or d.is_closed) else d.is_open,
            light=world.light_on,
        )

    def want(self, obj: str, literal: str) -> None:
        """The instruction asks ``literal`` about ``obj`` at the end. A later clause about the
        same block replaces a ``held`` (picking is a means); two different destinations are
        a contradiction, declined rather than resolved by whichever comes last."""
        prev = self.goal.pop(obj, None)
        if prev is not None and prev != literal and not prev.startswith("held("):
            raise Refuse(
                f"the instruction asks for {obj} to end in two places: {prev} and {literal}"
            )
        self.goal[obj] = literal

    def goal_list(self) -> list[str] | None:
        if not self.expressible:
            return None
        # a region is an area: several blocks may end at one, side by side (the place and
        # push skills choose the spot; a full region is their precondition, with its reason)
        out = list(self.goal.values()) + list(self.device_goal.values())
        return out + (["home"] if self.home else [])

    def move(self, obj: str, target: str) -> None:
        """pick (unless already held) and place ``obj`` on ``target``."""
        if self.held != obj:
            if self.held is not None:
                raise Unsure(f"the gripper would still hold {self.held}")
            self.steps.append({"skill": "pick", "object": obj})
        self.steps.append({"skill": "place", "target": target})
        self.held = None
        self.moved.add(obj)
        if self.world.bin(target) is not None or is_drawer(self.world, target):
            self.where[obj] = target
        elif self.world.object(target) is not None:
            self.where[obj] = f"on {target}"
        else:
            self.where[obj] = None


def tower_limit(plan: Plan, target: str, movers: list[str]) -> str | None:
    """Why nothing can be stacked on ``target`` where the plan leaves it, or None: a tower
    must stand on the table, stop at ``MAX_TOWER`` cubes, and have ``target`` on top."""
    on_it = [o for o, w in plan.where.items() if w == f"on {target}" and o not in movers]
    if on_it:
        return f"{on_it[0]} would be on {target}, so nothing else can be stacked on it"
    levels, cur, seen = 1, target, {target}
    while (w := plan.where.get(cur)) is not None:
        if not w.startswith("on "):
            where = "held" if w == "held" else f"in {w}"
            return f"{cur} would be {where}, not on the table, so no tower can stand on it"
        cur = w[3:]
        if cur in seen:
            break
        seen.add(cur)
        levels += 1
    if levels + 1 > MAX_TOWER:
        return f"{target} would top a tower of {levels}; towers stop at {MAX_TOWER} cubes"
    return None


def drawer_target(t: Phrase, plan: Plan) -> str | None:
    """The drawer, when a destination names it ("in the drawer", or "in it" right after a
    clause about the drawer); None for any other destination."""
    d = plan.world.drawer
    if d is None:
        return None
    if t.pronoun == "one" and plan.last_device == "drawer":
        if t.colors or t.noun is not None:
            raise Unsure("unclear destination")
        return d.name
    if t.noun == "thing:drawer" and not t.colors:
        return d.name
    return None


def is_drawer(world: WorldState, name: str) -> bool:
    return name in world.drawer_names


def arm_at_home(world: WorldState) -> bool:
    from skills.home import at_home  # the home skill's own test: "already home" means that

    return at_home(world)
