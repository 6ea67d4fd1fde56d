"""The rules planner: an instruction and a world to a :class:`RulesResult`."""

from __future__ import annotations

import planner.rx as re
from planner.rules.building import emit, emit_device
from planner.rules.clauses import device_action, parse_clause, split_clauses
from planner.rules.lexing import normalise
from planner.rules.plan import Plan
from planner.rules.references import check_exists
from planner.rules.repairs import repair_steps
from planner.rules.result import NOTHING_TO_DO, Infeasible, Refuse, RulesResult, Unsure
from planner.rules.vocabulary import HOME, OTHER_THINGS
from sim.world import WorldState


class RulesPlanner:
    """Parse an instruction against a world state. Pure and deterministic."""

    name = "rules"

    def parse(self, task: str, world: WorldState) -> RulesResult:
        """What the instruction means here. An unsure parse is retried once on the text with
        its typos repaired (:mod:`planner.spelling`: "stcak red on grene"), so a slip in a
        plain command needs no model."""
        r = self._parse_once(task, world)
        if r.confident or not task:
            return r
        from planner import spelling

        fixed = spelling.repair(task)
        if fixed == task:
            return r
        r2 = self._parse_once(fixed, world)
        if not r2.confident:
            return r
        r2.notes.append(f"read as: {fixed}"[:200])
        return r2

    def _parse_once(self, task: str, world: WorldState) -> RulesResult:
        try:
            return self._parse(task, world)
        except Refuse as e:
            msg = str(e)
            objs = ", ".join(world.object_names) or "none"
            bins = ", ".join(world.bin_names) or "none"
            return RulesResult(
                steps=[],
                confident=True,
                confidence=1.0,
                refuse=f"{msg} (objects: {objs}; bins: {bins})",
            )
        except Unsure as e:
            return RulesResult(
                steps=[],
                confident=False,
                confidence=0.0,
                notes=[str(e)],
                infeasible=str(e) if isinstance(e, Infeasible) else None,
            )

    # -- internals --------------------------------------------------------------
    def _parse(self, task: str, world: WorldState) -> RulesResult:
        if not task or not task.strip():
            raise Unsure("empty instruction")
        if len(task) > 500:
            raise Unsure("instruction too long for the rules planner")
        named = _skill_command(task, world)
        if named is not None:
            return named
        low = task.lower()
        likened = re.findall(
            r"\b(?:block|cube|brick|one|box)\s+(?:that\s+(?:looks|is)\s+)?(?:like|as)\s+(?:a|an|the|some)?\s*([a-z]+)|"
            r"\b([a-z]+)[- ]colou?red\b|"
            r"\bcolou?r\s+of\s+(?:a|an|the)?\s*([a-z]+)|\bmatch(?:es|ing)?\s+(?:a|an|the)?\s*([a-z]+)",
            low,
        )
        if any(w in OTHER_THINGS for g in likened for w in g if w):
            # "the banana-coloured one", "the block like a cherry": a thing that names a
            # colour, not a missing object; the rules would refuse it, a model can read it
            raise Unsure("a thing named for its colour")
        if re.search(
            r"\bsame\b.*\bas\b|\bsame (?:bin|box|basket|container|bucket|tub|crate|one)", low
        ):
            # "the same bin as the green block", "... and the yellow one in the same bin":
            # references to where something is or went
            raise Unsure("a comparison ('the same ... as') the rules do not resolve")
        tokens, points = normalise(task)
        clauses = split_clauses(tokens)
        if not clauses:
            raise Unsure("no instruction found")
        plan = Plan.start(world)
        unknown: list[str] = []
        prev_verb = None
        for toks in clauses:
            # on a scene without the device the request is refused with that reason
            action = device_action(toks)
            if action is not None:
                emit_device(action, plan)
                continue
            c = parse_clause(toks, points, prev_verb)
            unknown.extend(c.unknown)
            if c.verb is None:
                # no verb anywhere so far: maybe only "home"
                if c.obj.home and not c.obj.colors:
                    c.verb = HOME
                else:
                    raise Unsure(f"no action word in {' '.join(toks)!r}")
            prev_verb = c.verb if c.verb != HOME else prev_verb
            check_exists(c, world)
            plan.last = emit(c, plan)
            plan.last_device = None
        if plan.steps:
            plan.steps = repair_steps(plan.steps, world, plan.notes)
        if unknown:
            return RulesResult(
                steps=plan.steps,
                confident=False,
                confidence=max(0.0, round(1.0 - 0.25 * len(unknown), 2)),
                notes=plan.notes + [f"words not understood: {', '.join(dict.fromkeys(unknown))}"],
            )
        goal = plan.goal_list()
        if not plan.steps:
            return RulesResult(
                steps=[],
                confident=True,
                confidence=1.0,
                refuse=f"{NOTHING_TO_DO}: the scene already satisfies the instruction",
                notes=plan.notes,
                goal=goal,
            )
        return RulesResult(
            steps=plan.steps, confident=True, confidence=1.0, notes=plan.notes, goal=goal
        )


_DEFAULT = RulesPlanner()


def parse(task: str, world: WorldState) -> RulesResult:
    """Parse ``task`` against ``world`` with the default rules planner."""
    return _DEFAULT.parse(task, world)


def _skill_command(task: str, world: WorldState) -> RulesResult | None:
    """A request that is one of a registered skill's ``commands``
    (:attr:`skills.base.Skill.commands`): that skill alone, where the scene offers it. The
    skill says what asks for it; the grammar here needs no edit for a new one."""
    from bridge.schema import scene_skills
    from skills.registry import REGISTRY

    said = " ".join(re.findall(r"[a-z0-9']+", task.lower()))
    said = re.sub(r"^please |^now |^could you | please$", "", said)
    for name in scene_skills(world):
        if said and said in REGISTRY[name].commands:
            return RulesResult(steps=[{"skill": name}], confident=True, confidence=1.0)
    return None
