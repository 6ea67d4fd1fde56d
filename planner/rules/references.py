"""What a phrase names in the world: the blocks it means ("it", "them", "every block except
the red one", the held block), the place target ("it" after a clause, a region, a bin, the
drawer), and whether the named things exist here at all."""

from __future__ import annotations

from planner.rules.clauses import ParsedClause, is_container_prep, missing_message
from planner.rules.lexing import Phrase
from planner.rules.plan import Plan, drawer_target
from planner.rules.result import Refuse, Unsure
from sim.objects import KINDS
from sim.world import WorldState


def check_exists(c: ParsedClause, world: WorldState) -> None:
    """Refuse a clause that names what the scene lacks (an absent colour, a bin or block
    of a colour not here, a thing this robot has no such thing as), with the reason."""
    if c.source_thing is not None and world.drawer is None:
        raise Refuse(missing_message(c.source_thing, "source"))
    for role, p in (("object", c.obj), ("target", c.target)):
        if p is None:
            continue
        if p.noun == "thing:drawer" and world.drawer is not None and not p.other_colors:
            if role == "target":
                continue  # a block goes into the drawer
            raise Unsure("the drawer itself cannot be moved")
        if p.other_colors or (p.noun or "").startswith("thing:"):
            raise Refuse(missing_message(p, role))
        noun = p.noun
        if noun is None and p.colors:
            noun = "bin" if role == "target" and is_container_prep(c) else "block"
        for col in p.excluded:
            if world.object(f"{col}_block") is None:
                raise Refuse(f"there is no {col} block in the scene")
        for col in p.colors:
            if noun == "bin" and world.bin(f"{col}_bin") is None:
                raise Refuse(f"there is no {col} bin in the scene")
            if noun == "block" and world.object(f"{col}_block") is None:
                raise Refuse(f"there is no {col} block in the scene")


def objects_of(p: Phrase, plan: Plan) -> list[str]:
    """The blocks a phrase names."""
    if p.noun == "bin":
        raise Unsure("a bin cannot be moved")
    if p.region or p.point:
        raise Unsure("expected a block, found a place")
    if p.excluded and not (p.quant or p.plural):
        raise Unsure("'except' without 'all' or 'every'")
    if p.excluded and p.colors:
        raise Unsure("both named blocks and exclusions")
    if p.pronoun == "one":
        if len(plan.last) == 1:
            return list(plan.last)
        raise Unsure("'it' does not refer to one block")
    if p.pronoun == "many":
        if plan.last:
            return list(plan.last)
        raise Unsure("'them' refers to nothing")
    present = plan.world.object_names
    if p.colors:
        return [f"{c}_block" for c in dict.fromkeys(p.colors)]
    if p.quant or (p.plural and not p.match):
        left = [o for o in present if o.split("_", 1)[0] not in p.excluded]
        if not left:
            raise Refuse("no block is left after the exclusions")
        return left
    if p.noun == "block" and not p.match:
        if plan.held and not p.plural:
            return [plan.held]
        if len(present) == 1:
            return list(present)
        raise Unsure("which block?")
    raise Unsure("no block named")


def target_of(t: Phrase, c: ParsedClause, plan: Plan) -> str:
    """The place target a destination phrase names."""
    world = plan.world
    if t.point is not None:
        raise Unsure("placing at an [x, y] point is not a place target")
    drawer = drawer_target(t, plan)
    if drawer is not None:
        return drawer
    if t.pronoun == "one" and not t.colors and t.noun in (None, "block") and not t.quant:
        # "... then put the yellow block on top of it": the block of the previous clause
        if len(plan.last) != 1 or is_container_prep(c):
            raise Unsure("unclear destination")
        return plan.last[0]
    if t.pronoun or t.quant:
        raise Unsure("unclear destination")
    if t.region and not t.colors and t.noun is None:
        return t.region
    if len(set(t.colors)) > 1:
        raise Unsure("more than one destination")
    noun = t.noun
    if noun is None and t.colors:
        noun = "bin" if is_container_prep(c) else "block"
    if noun == "bin":
        if not t.colors:
            if len(world.bins) == 1:
                return world.bins[0].name
            raise Unsure("which bin?")
        return f"{t.colors[0]}_bin"
    if noun == "block":
        if not t.colors:
            raise Unsure("which block?")
        name = f"{t.colors[0]}_block"
        o = world.object(name)
        if o is not None and not KINDS[o.kind].stackable and not is_container_prep(c):
            # (the mixed scene: nothing stays on a ball)
            word = {"sphere": "ball"}.get(o.kind, o.kind)
            raise Refuse(f"nothing stays on top of the {t.colors[0]} {word}: it is round")
        return name
    raise Unsure("no destination understood")
