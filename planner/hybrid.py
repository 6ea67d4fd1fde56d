"""Rules before models: the planner front door.

``hybrid`` (default): when the rules planner understands the *whole* instruction (or
confidently declines it), its plan goes to the bridge and no model is called. Otherwise the
model proposes, the bridge validates and asks for regenerations, and the rules planner is
the first fallback (then the bridge's safe stop). ``rules`` and ``model`` force one route.
The regenerate/fallback loop itself is the bridge's (``bridge.policy.negotiate``).
"""

from __future__ import annotations

import dataclasses
import json
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from planner import kinds
from planner.errors import PlannerError
from planner.llm import LLMProposer, Usage
from planner.rules import NOTHING_TO_DO, RulesPlanner, RulesResult
from planner.understand import PLAN, Understanding, understand

if TYPE_CHECKING:
    from bridge.policy import AttemptRecord, Negotiation, PlanRequest, Proposal, Proposer
    from bridge.validate import BridgeResult
    from sim.world import WorldState

ROUTES = ("hybrid", "rules", "model")
#: What a user without a model is told when the rules do not understand them.
NO_MODEL_HINT = "no language model is set up: run `make install` or pass --llm"


class RulesProposer:
    """The rules planner as a bridge ``Proposer``. Unsure parses become refusals (never
    guesses), so as a fallback it either plans with confidence or declines with a reason."""

    name = "rules"

    def __init__(
        self,
        planner: RulesPlanner | None = None,
        *,
        as_fallback: bool = False,
        no_model_hint: bool = False,
    ) -> None:
        self.planner = planner or RulesPlanner()
        #: As a fallback after a model, an instruction it cannot parse yields an empty plan
        #: (rejected, so the bridge moves on to the safe stop) instead of a refusal.
        self.as_fallback = as_fallback
        #: With no model configured, a refusal for not understanding says how to get one.
        self.no_model_hint = no_model_hint

    def propose(self, request: PlanRequest) -> Proposal:
        from bridge.policy import Proposal

        t0 = time.monotonic()
        world = request.world
        r = kinds.named_back(self.planner.parse(request.task, kinds.colour_view(world)), world)
        if r.confident:
            raw = r.to_json()
        elif self.as_fallback:
            raw = json.dumps({"steps": []})
        else:
            why = ("; ".join(r.notes) or "not understood")[:110]
            text = f"the rules planner could not parse this: {why}"
            if self.no_model_hint:
                text += f"; {NO_MODEL_HINT}"
            raw = json.dumps({"steps": [], "refuse": text[:200]})
        return Proposal(
            raw=raw,
            tokens_in=0,
            tokens_out=0,
            latency_s=time.monotonic() - t0,
            meta={
                "source": "rules",
                "confident": r.confident,
                "confidence": r.confidence,
                "notes": list(r.notes),
            },
        )


class _Counted:
    """Wraps a proposer to add every proposal to a :class:`Usage` (per task totals)."""

    def __init__(self, inner: Proposer, usage: Usage, log: list[dict]) -> None:
        self.inner = inner
        self.name = inner.name
        self._usage = usage
        self._log = log

    def propose(self, request: PlanRequest) -> Proposal:
        t0 = time.monotonic()
        asked = request
        if not isinstance(self.inner, RulesProposer):  # (the rules proposer views it itself)
            # a model reads the scene as the language layer does: objects by colour
            view = kinds.colour_view(request.world)
            asked = request if view is request.world else dataclasses.replace(request, world=view)
        try:
            p = self.inner.propose(asked)
        except Exception as e:
            self._usage.add(self.name, 0, 0, time.monotonic() - t0)
            self._log.append(
                {
                    "proposer": self.name,
                    "attempt": getattr(request, "attempt", None),
                    "error": f"{type(e).__name__}: {e}"[:300],
                }
            )
            raise
        if isinstance(p.raw, str):  # the layer's colour names as the scene's (planner.kinds)
            p.raw = kinds.scene_names(p.raw, request.world)
        retries = (p.meta or {}).get("retries", 0) if isinstance(p.meta, dict) else 0
        self._usage.add(self.name, p.tokens_in, p.tokens_out, p.latency_s, retries)
        self._log.append(
            {
                "proposer": self.name,
                "attempt": getattr(request, "attempt", None),
                "raw": p.raw,
                "tokens_in": p.tokens_in,
                "tokens_out": p.tokens_out,
                "latency_s": round(p.latency_s, 4),
                "retries": retries,
            }
        )
        return p


@dataclass
class PlanOutcome:
    """A negotiated plan plus how it was reached (route, rules parse, usage)."""

    negotiation: Negotiation
    route: str
    rules: RulesResult
    usage: Usage
    proposals: list[dict] = field(default_factory=list)
    #: what the utterance was read as (planner.understand); None when understanding is off
    understanding: Understanding | None = None

    @property
    def plan(self) -> BridgeResult | None:
        return self.negotiation.plan

    @property
    def decision(self) -> str:
        from bridge.policy import Decision

        d = self.negotiation.decision
        plan = self.negotiation.plan
        if (
            d == Decision.REFUSED
            and plan is not None
            and (plan.refusal or "").startswith(NOTHING_TO_DO)
        ):
            return Decision.NOTHING_TO_DO
        return d

    @property
    def accepted_meta(self) -> dict:
        """What the proposer of the accepted plan reported with it (empty without one)."""
        accepted = [a for a in self.attempts if str(getattr(a, "decision", "")) == "accepted"]
        meta = accepted[-1].meta if accepted else {}
        return meta if isinstance(meta, dict) else {}

    @property
    def confidence(self) -> float | None:
        """The model's certainty in the accepted plan (None when no model reported one)."""
        conf = self.accepted_meta.get("confidence")
        return float(conf) if isinstance(conf, (int, float)) else None

    @property
    def kind(self) -> str:
        """plan, nothing_to_do, answer, clarify, stop, refuse or safe_stop."""
        from bridge.policy import PLAN_DECISIONS, Decision

        d = self.decision
        if d in PLAN_DECISIONS:
            return "plan"
        kinds: dict[str, str] = {
            Decision.NOTHING_TO_DO: "nothing_to_do",
            Decision.ANSWER: "answer",
            Decision.CLARIFY: "clarify",
            Decision.STOP: "stop",
            Decision.REFUSED: "refuse",
            Decision.SAFE_STOP: "safe_stop",
        }
        return kinds.get(d, "failed")

    @property
    def source(self) -> str | None:
        return self.negotiation.source

    @property
    def attempts(self) -> list[AttemptRecord]:
        return self.negotiation.attempts

    @property
    def trace_id(self) -> str:
        return self.negotiation.trace_id

    def steps(self) -> list[dict]:
        """The accepted subgoals as plain dicts (empty unless the plan is executable)."""
        plan = self.plan
        if plan is None or not plan.accepted:
            return []
        return plan.plan_json()

    @property
    def refusal(self) -> str | None:
        """The reason a task is declined ("nothing to do: ..." included, for callers that
        read it as done), or None."""
        plan = self.plan
        if self.negotiation.decision != "refused" or plan is None:
            return None
        return plan.refusal

    @property
    def reason(self) -> str | None:
        """Why nothing (or only the safe stop) will run, in words, for every kind that does
        not move: a refusal's reason, a safe stop's last rejections, a clarify's question."""
        u = self.understanding
        if u is not None and u.kind != PLAN:
            return u.reason or u.answer or u.question
        if self.refusal:
            return self.refusal
        from bridge.policy import Decision

        if self.decision == Decision.SAFE_STOP:
            msgs = [r.message for a in self.attempts for r in a.reasons][-2:]
            return "no valid plan: " + "; ".join(msgs) if msgs else "no valid plan"
        return None

    @property
    def tokens_in(self) -> int:
        return self.usage.tokens_in

    @property
    def tokens_out(self) -> int:
        return self.usage.tokens_out

    def to_dict(self) -> dict:
        atts = [a.to_dict() if hasattr(a, "to_dict") else a for a in self.attempts]
        for a in atts:
            if isinstance(a, dict) and isinstance(a.get("meta"), dict):
                a["meta"].pop("prompt", None)  # prompts are in the trace, not the summary
        return {
            "trace_id": self.trace_id,
            "decision": self.decision,
            "source": self.source,
            "route": self.route,
            "kind": self.kind,
            "steps": self.steps(),
            "refuse": self.refusal,
            "reason": self.reason,
            "answer": self.understanding.answer if self.understanding else None,
            "question": self.understanding.question if self.understanding else None,
            "candidates": self.understanding.candidates if self.understanding else None,
            "understanding": self.understanding.to_dict() if self.understanding else None,
            "rules": {
                "confident": self.rules.confident,
                "confidence": self.rules.confidence,
                "notes": self.rules.notes,
            },
            "attempts": atts,
            "usage": self.usage.to_dict(),
        }


class HybridPlanner:
    """Chooses the proposers for a task and lets the bridge negotiate the plan."""

    def __init__(
        self,
        llm: Proposer | None = None,
        *,
        route: str = "hybrid",
        max_regenerations: int = 2,
        rules: RulesPlanner | None = None,
        safe_stop: bool = True,
        rules_fallback: bool = True,
        max_steps: int = 12,
        understanding: bool = True,
        no_model_hint: bool = True,
        ask_below: float | None = None,
    ) -> None:
        if route not in ROUTES:
            raise PlannerError(f"unknown planner route {route!r}; expected {', '.join(ROUTES)}")
        if route == "model" and llm is None:
            raise PlannerError("the model route needs a model: pass --llm PROVIDER:MODEL")
        self.llm = llm
        self.route = route
        self.max_regenerations = max_regenerations
        self.rules = rules or RulesPlanner()
        self.rules_proposer = RulesProposer(self.rules)
        self.rules_fallback_proposer = RulesProposer(self.rules, as_fallback=True)
        self.rules_hint_proposer = RulesProposer(self.rules, no_model_hint=True)
        self.safe_stop = safe_stop
        self.rules_fallback = rules_fallback
        self.max_steps = max_steps
        #: read questions, prohibitions, references and other languages first
        self.understanding = understanding
        #: say "no language model is set up" when the rules do not understand (not when the
        #: user chose the rules)
        self.no_model_hint = no_model_hint
        #: a model plan whose certainty (its lowest token probability) is below this is
        #: asked back instead of run (calibrated by scripts/calibrate_asking.py; None: the
        #: shipped calibration for the embedded model, 0 for any other)
        self.ask_below = ask_below
        #: a model plan whose certainty (its lowest token probability) is below this is
        #: asked back instead of run (calibrated by scripts/calibrate_asking.py; None: the
        #: shipped calibration for the embedded model, 0 for any other)
        self.ask_below = ask_below

    @classmethod
    def from_spec(
        cls,
        spec: str | None = None,
        *,
        base_url: str | None = None,
        route: str = "hybrid",
        **kw: Any,
    ) -> HybridPlanner:
        """Spec from the argument, ``SKILLBRIDGE_LLM`` or the config file (else rules)."""
        from planner.backends import resolve_spec

        s = resolve_spec(spec, base_url=base_url)
        llm: Proposer | None
        if s.provider == "embedded":
            from planner.backends import make_embedded
            from planner.embedded.proposer import EmbeddedProposer

            llm = EmbeddedProposer(make_embedded(s), name=str(s))
        else:
            llm = None if s.provider == "rules" else LLMProposer.from_spec(s)
        if llm is None and route == "hybrid":
            route = "rules"
        if s.provider == "rules":
            kw.setdefault("no_model_hint", getattr(s, "origin", "default") == "default")
        return cls(llm, route=route, **kw)

    @property
    def spec(self) -> str:
        return self.llm.name if self.llm is not None else "rules"

    def choose(self, task: str, world: WorldState) -> tuple[str, list[Proposer], RulesResult]:
        """(route taken, proposers in order, the rules parse)."""
        r = kinds.named_back(self.rules.parse(task, kinds.colour_view(world)), world)
        # (the model route without a model is refused when the planner is built)
        if self.llm is None or self.route == "rules" or (self.route == "hybrid" and r.confident):
            if self.llm is None and not r.confident and self.no_model_hint:
                return "rules", [self.rules_hint_proposer], r
            return "rules", [self.rules_proposer], r
        chain: list[Proposer] = [self.llm]
        if self.rules_fallback:
            chain.append(self.rules_fallback_proposer)
        return "model", chain, r

    def understand(self, task: str, world: WorldState) -> Understanding | None:
        """What ``task`` says (None with understanding off). Never raises: a bug in the
        reading falls back to planning the words as they are, with a note."""
        if not self.understanding:
            return None
        # a scene of several kinds: "the cube" beside two cubes is asked about, "the ball"
        # read as the colour phrase the layer knows ("the yellow block"; planner.kinds)
        from planner.understand import noise
        from planner.understand.translate import detect

        # "teh bal": the kind words are read after the slips (of English: "blu" is Italian)
        lang = detect(task)
        heard = noise.clean(task) if lang == "en" else task
        if lang != "en" and kinds.is_mixed(world):
            # "la pelota amarilla": kind and size words are read in English, so the
            # translation comes first where the scene has kinds to tell apart
            from planner.understand import _normalise
            from planner.understand.translate import translate

            heard = noise.clean(translate(_normalise(task))[0])
        question = kinds.ambiguous(heard, world)
        if question is not None:
            why = "the words fit more than one object"
            return Understanding("clarify", task, task, question=question, reason=why)
        sized = kinds.describe(heard, world)
        if sized is None and kinds.is_mixed(world):
            sized = kinds.compare(heard, world) or kinds.properties(heard, world)
        if sized is not None:
            return Understanding("answer", task, task, answer=sized)
        said = kinds.spoken(heard, world)
        try:
            u = understand(said, kinds.colour_view(world))
        except Exception as e:  # noqa: BLE001 - the planner must still answer
            u = Understanding(PLAN, said, said, notes=[f"not understood ({e!r})"])
        u.original = task
        if lang != "en" and u.language == "en":
            u.language = lang
            u.notes.insert(0, f"translated: {heard!r}")
        u.constraints = kinds.scene_constraints(u.constraints, world)
        if u.answer is not None:
            u.answer = kinds.in_scene_words(u.answer, world)
        if u.question is not None:
            u.question = kinds.in_scene_words(u.question, world)
        return u

    def plan(
        self,
        task: str,
        world: WorldState,
        *,
        history: list[dict] | None = None,
        trace_id: str | None = None,
        understood: Understanding | None = None,
    ) -> PlanOutcome:
        """Plan ``task``. ``understood`` is the reading made at the start of a task (the
        closed loop reads once, so "the leftmost block" keeps meaning the same cube after
        the cubes move); without it the task is read now."""
        from bridge.policy import negotiate

        u = understood if understood is not None else self.understand(task, world)
        if u is not None and u.kind != PLAN:
            return _not_a_plan(u, trace_id)
        text = u.text if u is not None else kinds.spoken(task, world)
        route, proposers, r = self.choose(text, world)
        usage = Usage()
        log: list[dict] = []
        counted = [_Counted(p, usage, log) for p in proposers]
        neg = negotiate(
            text,
            world,
            counted,
            max_regenerations=self.max_regenerations,
            trace_id=trace_id,
            history=history,
            safe_stop=self.safe_stop,
            max_steps=self.max_steps,
            constraints=u.constraints if u is not None else None,
        )
        out = PlanOutcome(neg, route, r, usage, log, u)
        unsure = self._unsure(out)
        if unsure is not None:
            return unsure
        return out

    def threshold(self) -> float:
        """The certainty under which a model plan is asked back (see ``ask_below``)."""
        if self.ask_below is not None:
            return self.ask_below
        if self.llm is not None and str(getattr(self.llm, "name", "")).startswith("embedded"):
            from planner.calibration import asking_threshold

            return asking_threshold()
        return 0.0

    def _unsure(self, out: PlanOutcome) -> PlanOutcome | None:
        """A clarify outcome for an accepted model plan the model itself was unsure of."""
        from bridge.policy import PLAN_DECISIONS

        if (
            out.route != "model"
            or out.decision not in PLAN_DECISIONS
            or out.source != getattr(self.llm, "name", None)
        ):
            return None
        meta = out.accepted_meta
        conf = out.confidence
        tau = self.threshold()
        if conf is None or conf >= tau:
            return None
        said = str(meta.get("command") or "that")
        u = Understanding(
            "clarify",
            out.understanding.original if out.understanding else said,
            said,
            notes=list(out.understanding.notes) if out.understanding else [],
            question=f"I am not sure I understood. Do you mean: {said}?",
            reason=f"the model's certainty {conf:.2f} is under the calibrated {tau:.2f}",
        )
        unsure = _not_a_plan(u, out.trace_id)
        unsure.negotiation.attempts = list(out.attempts)
        unsure.usage = out.usage
        unsure.proposals = out.proposals
        unsure.route = out.route
        return unsure


def _not_a_plan(u: Understanding, trace_id: str | None) -> PlanOutcome:
    """The outcome for an utterance that is not a command: nothing to execute."""
    import uuid

    from bridge.policy import Decision, Negotiation
    from bridge.reasons import REFUSED, Reason
    from bridge.validate import BridgeResult

    decision = {
        "answer": Decision.ANSWER,
        "clarify": Decision.CLARIFY,
        "stop": Decision.STOP,
        "refuse": Decision.REFUSED,
    }[u.kind]
    plan = None
    if u.kind == "refuse":
        why = (u.reason or "declined")[:200]
        plan = BridgeResult(
            accepted=False, reasons=[Reason(REFUSED, "", why, "")], refusal=why, raw=""
        )
    neg = Negotiation(trace_id or uuid.uuid4().hex, plan, decision, "understand", [])
    rules = RulesResult(steps=[], confident=True, confidence=1.0, notes=list(u.notes))
    return PlanOutcome(neg, "understand", rules, Usage(), [], u)
