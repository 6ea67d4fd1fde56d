"""One clause to steps, and each clause's goal: moves, stacks, pushes, picks, home, sorting
into matching bins, and the articulated scene's devices. Each emitter returns the blocks
"it"/"them" refer to next; a goal the world already satisfies gets no steps."""

from __future__ import annotations

from planner.rules.clauses import ParsedClause
from planner.rules.lexing import Phrase
from planner.rules.plan import Plan, arm_at_home, is_drawer, tower_limit
from planner.rules.references import objects_of, target_of
from planner.rules.result import Infeasible, Refuse, Unsure
from planner.rules.vocabulary import HOME, MOVE, PICK, PICK_LIKE, PUSH, SORT
from sim.objects import KINDS


def emit(c: ParsedClause, plan: Plan) -> list[str]:
    """The steps and goal of one clause, by its verb and destination."""
    t = c.target
    if is_home(c):
        return emit_home(c, plan)
    if c.verb == SORT and (t is None or t.empty or (t.noun == "bin" and t.match)):
        objs = objects_of(c.obj, plan) if not c.obj.empty else list(plan.world.object_names)
        return to_matching(objs, plan, explicit=bool(c.obj.colors))
    if t is None or t.empty:
        if c.verb == PICK or (c.verb == MOVE and c.verb_word in PICK_LIKE):
            return emit_pick(c, plan)
        raise Unsure("no destination given")
    if c.verb == PUSH:
        return emit_push(c, t, plan)
    # MOVE / STACK / SORT with a destination ("lift the red block onto the blue one"
    # reads as a move too)
    return emit_move(c, t, plan)


def is_home(c: ParsedClause) -> bool:
    """Whether the clause sends the arm home ("go home", "back to the start position")."""
    t = c.target
    return (
        c.verb == HOME
        or (t is not None and t.home and not t.colors)
        or (c.obj.home and not c.obj.colors and c.obj.noun is None)
    )


def emit_device(action: str, plan: Plan) -> None:
    """open_drawer / close_drawer / press_button for a device clause, skipped (with a
    note) where the plan already leaves the device so."""
    w = plan.world
    plan.last_device = "drawer" if action in ("open", "close") else None  # "... in it"
    if action in ("open", "close"):
        if w.drawer is None:
            raise Refuse("there is no drawer in the scene; only blocks and bins")
        want = action == "open"
        lit = f"{'open' if want else 'closed'}({w.drawer.name})"
        plan.device_goal[w.drawer.name] = lit
        if plan.drawer_open == want:
            plan.notes.append(f"the drawer is already {'open' if want else 'closed'}")
            return
        if plan.held is not None:
            raise Unsure(f"the gripper would still hold {plan.held}")
        plan.steps.append({"skill": f"{action}_drawer"})
        plan.drawer_open = want
        return
    if plan.light is None:
        raise Refuse("there is no button or light in the scene; only blocks and bins")
    want = {"light_on": True, "light_off": False}.get(action, not plan.light)
    plan.device_goal["light"] = "light_on" if want else "not light_on"
    if plan.light == want:
        plan.notes.append(f"the light is already {'on' if want else 'off'}")
        return
    if plan.held is not None:
        raise Unsure(f"the gripper would still hold {plan.held}")
    plan.steps.append({"skill": "press_button"})
    plan.light = want


def emit_home(c: ParsedClause, plan: Plan) -> list[str]:
    if c.obj.colors or (c.obj.noun and c.obj.noun != "bin" and c.verb != HOME):
        raise Unsure("cannot take a block home")
    # home opens the gripper: a block picked earlier is not held at the end
    for obj in [o for o, lit in plan.goal.items() if lit.startswith("held(")]:
        del plan.goal[obj]
    plan.home = True
    w = plan.world
    if not plan.steps and plan.held is None and arm_at_home(w):
        plan.notes.append("the arm is already at home")
        return plan.last
    plan.steps.append({"skill": "home"})
    plan.held = None
    return plan.last


def emit_pick(c: ParsedClause, plan: Plan) -> list[str]:
    objs = objects_of(c.obj, plan)
    if len(objs) != 1:
        raise Unsure("can pick only one block at a time")
    plan.want(objs[0], f"held({objs[0]})")
    if plan.held == objs[0]:
        return objs
    if plan.held is not None:
        raise Unsure(f"the gripper would already hold {plan.held}")
    plan.steps.append({"skill": "pick", "object": objs[0]})
    plan.held = objs[0]
    plan.moved.add(objs[0])
    return objs


def emit_push(c: ParsedClause, t: Phrase, plan: Plan) -> list[str]:
    """``t`` is ``c.target``, passed apart because :func:`emit` has ruled out a missing one."""
    objs = objects_of(c.obj, plan)
    if len(objs) != 1:
        raise Unsure("push one block at a time")
    target: list[float] | str
    if t.point is not None:
        target = list(t.point)
    elif t.region is not None and t.noun is None and not t.colors:
        target = t.region
    else:
        raise Unsure("push needs a table region or an [x, y] point")
    o = objs[0]
    if isinstance(target, str):
        plan.want(o, f"at({o}, {target})")
        if o not in plan.moved and plan.held != o and plan.world.in_region(o, target):
            # already there: a push would be rejected as no_effect and end the run
            plan.notes.append(f"{o} is already at {target}")
            return objs
    else:
        plan.expressible = False  # no predicate for an [x, y] point
        plan.goal.pop(o, None)
    plan.steps.append({"skill": "push", "object": o, "target": target})
    plan.moved.add(o)
    plan.where[o] = None
    return objs


def emit_move(c: ParsedClause, t: Phrase, plan: Plan) -> list[str]:
    """``t`` is ``c.target``, passed apart because :func:`emit` has ruled out a missing one."""
    world = plan.world
    if t.noun == "bin" and t.match and not t.colors:
        objs = objects_of(c.obj, plan)
        return to_matching(objs, plan, explicit=bool(c.obj.colors) and not c.obj.quant)
    target = target_of(t, c, plan)
    if c.obj.match and not c.obj.colors:
        # "the block of the same colour" as the destination
        col = target.split("_", 1)[0]
        if world.object(f"{col}_block") is None:
            raise Refuse(f"there is no {col} block in the scene")
        objs = [f"{col}_block"]
    else:
        objs = objects_of(c.obj, plan)
    is_cube_target = world.object(target) is not None
    if is_cube_target and len(objs) != 1:
        raise Unsure("stacking several blocks on one block is ambiguous")
    if is_cube_target:
        why = tower_limit(plan, target, objs)
        if why is not None:
            raise Infeasible(why)
        moved_obj = world.object(objs[0])
        if moved_obj is not None and KINDS[moved_obj.kind].rolls:  # (the mixed scene's ball)
            col = objs[0].split("_", 1)[0]
            why = f"the {col} ball would roll off another object: put it in a bin or on the table"
            raise Refuse(why)
    if objs == [target]:  # "stack the red block on the red block": clear, and impossible
        raise Infeasible(f"{target} cannot be stacked on itself")
    if target in objs:
        raise Unsure("cannot put a block on itself")
    moved = []
    into_drawer = is_drawer(world, target)
    lit = (
        "in({o}, {t})"
        if world.bin(target) is not None or into_drawer
        else "on({o}, {t})"
        if is_cube_target
        else "at({o}, {t})"
    )
    for o in objs:
        plan.want(o, lit.format(o=o, t=target))
        # a goal the scene already satisfies is skipped, so replanning the same task
        # after a partial execution continues where it stopped instead of redoing it
        done_here = (
            ((world.bin(target) is not None or into_drawer) and plan.where.get(o) == target)
            or (is_cube_target and plan.where.get(o) == f"on {target}")
            or (
                world.region(target) is not None
                and o not in plan.moved
                and world.in_region(o, target)
            )
        )
        if done_here and plan.held != o:
            plan.notes.append(
                f"{o} is already {'in' if world.bin(target) else 'on'} {target}"
                if world.region(target) is None
                else f"{o} is already at {target}"
            )
            continue
        if into_drawer and not plan.drawer_open:
            # the drawer must be open to take a block: open it first (the gripper is
            # free before a pick; a held block is not put down to do it)
            if plan.held is not None:
                raise Unsure(f"the drawer is shut and the gripper holds {plan.held}")
            plan.steps.append({"skill": "open_drawer"})
            plan.drawer_open = True
            plan.notes.append("the drawer is shut: open it first")
        plan.move(o, target)
        moved.append(o)
    return moved or objs


def to_matching(objs: list[str], plan: Plan, *, explicit: bool) -> list[str]:
    """Each block into the bin of its colour."""
    moved = []
    for o in objs:
        col = o.split("_", 1)[0]
        b = f"{col}_bin"
        if plan.world.bin(b) is None:
            if explicit:
                raise Refuse(f"there is no {col} bin for {o}")
            plan.notes.append(f"{o} has no bin of its colour; left where it is")
            continue
        plan.want(o, f"in({o}, {b})")
        if plan.where.get(o) == b and not explicit:
            plan.notes.append(f"{o} is already in {b}")
            continue
        plan.move(o, b)
        moved.append(o)
    return moved or objs
