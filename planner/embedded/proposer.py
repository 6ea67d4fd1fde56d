"""The embedded model as a bridge ``Proposer`` (in process, or any chat model such as a
client of its server).

Why two steps: the model rewrites the user's words into the command language; the rules
planner grounds that command in the scene (which cubes exist, what is already done, what
"every block" covers) and writes the plan JSON, goal included; the bridge then validates the
plan like any model's. A regeneration samples (temperature 0.7, a new seed per attempt), so
it is never the same answer word for word.

Two cheap checks around the model (first attempt only): typos in words outside English and
outside the robot's vocabulary are repaired before the model reads them
(:mod:`planner.spelling`), and a command that drops a colour the user named, or that the
rules cannot parse, is replaced by the item-by-item rewrite of a plain list
(:mod:`planner.embedded.coverage`) when that keeps every colour.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from planner import rules, spelling
from planner.embedded import coverage, refusal
from planner.embedded.model import EmbeddedModel, Rewrite, get_model
from planner.embedded.prompt import scene_of, user_text
from planner.errors import PlannerError, ProviderUnreachable
from planner.llm import UNREACHABLE_HOLD_S, clean_text, model_address, unreachable
from planner.rules import MAX_REFUSAL

if TYPE_CHECKING:
    from langchain_core.language_models.chat_models import BaseChatModel

    from bridge.policy import PlanRequest, Proposal
    from sim.world import WorldState

#: Temperature of regenerations (the first answer is greedy).
REGEN_TEMPERATURE = 0.7
REFUSE_PREFIX = "refuse:"


class InProcessModel:
    """The embedded model in this process, asked directly (no chat-model layer: langchain
    is not imported on this route). ``engine()`` loads it on first use (once per process,
    :func:`planner.embedded.model.get_model`)."""

    def __init__(self, adapter_dir: str | None = None, threads: int | None = None) -> None:
        self.adapter_dir = adapter_dir
        self.threads = threads

    def engine(self) -> EmbeddedModel:
        return get_model(Path(self.adapter_dir) if self.adapter_dir else None, self.threads)


def __getattr__(name: str) -> Any:
    # the langchain chat model, for code that imported it from here before it had a module
    # of its own (importing it costs langchain)
    if name == "EmbeddedChatModel":
        from planner.embedded.chat import EmbeddedChatModel

        return EmbeddedChatModel
    raise AttributeError(name)


def command_to_plan(command: str, world: WorldState) -> tuple[dict, dict]:
    """(plan JSON, notes) for a command: a refusal, or what the rules planner makes of it."""
    text = command.strip()
    if _is_refusal(text):
        why = text[len(REFUSE_PREFIX) :].strip() or "the request cannot be done here"
        return {"steps": [], "refuse": why[:MAX_REFUSAL]}, {"refused_by": "model"}
    r = rules.parse(text, world)
    if r.confident:
        return r.to_dict(), {"rules_notes": list(r.notes)}
    if r.infeasible:  # the command is clear and no skill can do it: say why, once
        return {"steps": [], "refuse": r.infeasible[:MAX_REFUSAL]}, {"refused_by": "rules"}
    # the model wrote something the command grammar does not cover: an empty plan, which
    # the bridge rejects, so the model is asked again
    return {"steps": []}, {"rules_notes": list(r.notes), "not_a_command": True}


class EmbeddedProposer:
    """The embedded model as a ``bridge.policy.Proposer``."""

    def __init__(
        self, chat: InProcessModel | BaseChatModel | None = None, name: str = "embedded"
    ) -> None:
        # the embedded model in process (asked directly), or any chat model: a ChatOpenAI
        # client of its server, or the in-process one behind langchain's interface
        self.chat: Any = chat or InProcessModel()
        self.name = name
        self._loaded = False
        #: why the last proposal could not ask the model at all (it would not load, or its
        #: server is unreachable); None once it answered. The CLI names it to the user.
        self.failure: PlannerError | None = None
        self._down_until = 0.0
        #: the token certainties of the current proposal's model calls
        self._probs: list[float] = []

    def propose(self, request: PlanRequest) -> Proposal:
        from bridge.policy import Proposal

        load_s = None
        if isinstance(self.failure, ProviderUnreachable) and time.monotonic() < self._down_until:
            raise ProviderUnreachable(str(self.failure), where=self.failure.where, attempts=0)
        if _in_process(self.chat) and not self._loaded:
            # loading is once per process and reported apart, not as the plan's latency
            t_load = time.monotonic()
            try:
                engine = self.chat.engine()
            except PlannerError as e:  # get_model remembers it: no second load is tried
                self.failure = e
                raise
            load_s = engine.load_s if time.monotonic() - t_load > 0.01 else 0.0
            self._loaded = True
        t0 = time.monotonic()
        attempt = int(getattr(request, "attempt", 0) or 0)
        kw = {"temperature": REGEN_TEMPERATURE, "seed": attempt} if attempt else {}
        # the model saw few all-capitals instructions; their lower case means the same
        task = clean_text(request.task)
        task = task.lower() if task.isupper() else task
        task = spelling.repair(task)
        scene = scene_of(request.world)
        tokens = [0, 0]
        self._probs = []
        try:
            command = self._ask(task, scene, tokens, **kw)
        except Exception as e:
            why = unreachable(e)
            if why is None:
                raise
            where = model_address(self.chat)
            at = f" at {where}" if where and where not in self.name else ""
            text = f"{self.name} is unreachable ({why}{at})"
            self.failure = ProviderUnreachable(text, where=where)
            self._down_until = time.monotonic() + UNREACHABLE_HOLD_S
            raise self.failure from e
        self.failure = None
        plan, notes = command_to_plan(command, request.world)
        if not attempt:
            second = self._second_look(task, command, scene, request.world, tokens)
            if second is not None:
                command, plan, notes = second
        lost = coverage.unaccounted(task, command, plan.get("steps") or [], request.world)
        if lost and plan.get("steps"):
            # a part of the request was dropped: no plan (the bridge asks again) rather than a
            # run that would report success for less than was asked
            plan = {"steps": []}
            notes["lost_colours"] = sorted(lost)
        if task != request.task:
            notes["repaired"] = task
        return Proposal(
            raw=json.dumps(plan, separators=(",", ":")),
            tokens_in=tokens[0],
            tokens_out=tokens[1],
            latency_s=time.monotonic() - t0,
            meta={
                "source": "model",
                "model": "embedded",
                "command": command,
                "temperature": kw.get("temperature", 0.0),
                # the model's own certainty (lowest token probability over its calls); None
                # from a server that does not report it
                "confidence": round(min(self._probs), 6) if self._probs else None,
                **({"load_s": round(load_s, 3)} if load_s else {}),
                **notes,
            },
        )

    def _ask(self, text: str, scene: str, tokens: list[int], **kw: Any) -> str:
        message = user_text(text, scene)
        if _in_process(self.chat):
            r: Rewrite = self.chat.engine().rewrite(
                message,
                temperature=float(kw.get("temperature", 0.0)),
                seed=int(kw.get("seed", 0)),
                no_refusal=bool(kw.get("no_refusal", False)),
            )
            self._probs.append(float(r.min_prob))
            tokens[0] += r.tokens_in
            tokens[1] += r.tokens_out
            return r.text.strip()
        from langchain_core.messages import HumanMessage

        if kw.get("no_refusal"):
            kw = {"extra_body": {"no_refusal": True}}  # the embedded model's HTTP server
        msg = self.chat.invoke([HumanMessage(content=message)], **kw)
        p = (getattr(msg, "response_metadata", None) or {}).get("min_prob")
        if isinstance(p, (int, float)):
            self._probs.append(float(p))
        t = _tokens(msg)
        tokens[0] += t[0]
        tokens[1] += t[1]
        return str(msg.content).strip()

    def _second_look(
        self, task: str, command: str, scene: str, world: WorldState, tokens: list[int]
    ) -> tuple[str, dict, dict] | None:
        """(command, plan, notes) that replace the first answer, or ``None`` to keep it.

        A plain list is rewritten item by item (short inputs are the model's best case) and
        that answer wins when every item gives a command, together they keep every colour the
        user named, and the rules planner grounds them. A refusal is only reconsidered when
        :func:`_overridable`."""
        refused = _is_refusal(command)
        if refused and not _overridable(command, task):
            return None
        items = coverage.items(task)
        if items:
            cmds = [self._checked(item, scene, tokens) for item in items]
            if any(not c or _is_refusal(c) for c in cmds):
                return None
            again = ", then ".join(cmds)
        elif refused:
            again = self._ask(task, scene, tokens, no_refusal=True)
        else:
            return None
        if _is_refusal(again) or coverage.missing(task, again):
            return None
        plan, notes = command_to_plan(again, world)
        if not plan.get("steps"):
            return None
        notes["first_command"] = command
        if items:
            notes["items"] = items
        return again, plan, notes

    def _checked(self, text: str, scene: str, tokens: list[int]) -> str:
        """The command for one item of a list the model did not refuse as a whole. An item's
        refusal is asked again with refusals ruled out unless its reason is checkable and
        fits, or the item holds a word no doable request uses; the second answer is kept
        when it names every colour of the item."""
        cmd = self._ask(text, scene, tokens)
        if _is_refusal(cmd) and _overridable(cmd, text, unchecked_stands=False):
            again = self._ask(text, scene, tokens, no_refusal=True)
            if not coverage.missing(text, again):
                return again
        return cmd


def _is_refusal(command: str) -> bool:
    return command.strip().lower().startswith(REFUSE_PREFIX)


def _overridable(command: str, text: str, *, unchecked_stands: bool = True) -> bool:
    """A refusal may be reconsidered only when its reason does not fit the words
    (:func:`refusal.supported`), every word is one of doable requests, and a colour is named.
    A reason no words can check stands, unless ``unchecked_stands`` is False (an item of a
    list the model did not refuse as a whole)."""
    reason = command.strip()[len(REFUSE_PREFIX) :]
    if unchecked_stands or refusal.checkable(reason):
        fits = refusal.supported(reason, text)
    else:
        fits = False
    return not fits and refusal.known_words(text) and bool(coverage.colours(text))


def _in_process(chat: Any) -> bool:
    """Whether ``chat`` is the embedded model in this process (asked through its engine,
    with no chat-model layer), rather than a client of its server or another chat model."""
    if isinstance(chat, InProcessModel):
        return True
    # langchain's wrapper of the same model, only ever in use once its module is imported
    mod = sys.modules.get("planner.embedded.chat")
    return mod is not None and isinstance(chat, mod.EmbeddedChatModel)


def _tokens(msg: Any) -> list[int]:
    usage = msg.usage_metadata
    if not usage:
        return [0, 0]
    return [int(usage.get("input_tokens", 0)), int(usage.get("output_tokens", 0))]
