"""A conversation with the robot while it works: the turns said so far and the utterances
waiting to be taken.

Why: a task is no longer one shot. The user answers the robot's questions and corrects it
while it moves, possibly from another thread (a terminal, an HTTP service, an agent); the
control loop must take a new utterance at the very next control step, and a test must be
able to say exactly at which step it arrives. So the conversation is one object that

- any thread may :meth:`Conversation.post` to (a lock guards everything; a condition wakes
  a robot waiting for an answer);
- the control loop polls once per control step with :meth:`Conversation.check`, which
  first runs the step hooks (a scripted user posts from there, deterministically, at the
  step it chose) and then takes the oldest waiting utterance, read against the task under
  way (:func:`planner.dialogue.interpret`): a question is answered at once and nothing
  stops; anything else is returned for the loop to act on;
- the planner's loop asks through with :meth:`Conversation.ask` (an answer given in
  advance, one already posted, a terminal prompt, or a bounded wait for a post);
- records every turn (:class:`Turn`) with its control step and clock time, and passes each
  to its subscribers (the episode trace, a live event stream).

Time comes from an injectable clock, so tests and benchmarks are deterministic.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from planner import dialogue as D

if TYPE_CHECKING:
    from sim.world import WorldState

log = logging.getLogger("skillbridge.conversation")

USER, ROBOT = "user", "robot"
#: Kinds of turns: the user's ``task``, ``answer`` (to a question) and ``message`` (said
#: while the robot works; its reading is in ``data["interjection"]``); the robot's
#: ``question``, ``reply`` (to a question of the user's), ``ack`` (what it does now) and
#: ``stopped``.
TURN_KINDS = ("task", "answer", "message", "question", "reply", "ack", "stopped")
#: Utterances waiting at most; a post beyond is refused (a flood is not a conversation).
MAX_PENDING = 64
#: Longest utterance kept (characters); longer is refused.
MAX_TEXT = 2000


class ConversationClosed(RuntimeError):
    """A post to a conversation whose run has ended."""


@dataclass
class Turn:
    """One thing said. ``step`` is the control step it was said at (the last step the
    control loop had reached), ``t`` the conversation clock; a user's utterance taken by
    the control loop also has ``taken_step`` / ``taken_t``."""

    index: int
    role: str
    kind: str
    text: str
    step: int
    t: float
    data: dict[str, Any] = field(default_factory=dict)
    taken_step: int | None = None
    taken_t: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "role": self.role,
            "kind": self.kind,
            "text": self.text,
            "step": self.step,
            "t": round(self.t, 6),
            "taken_step": self.taken_step,
            "taken_t": None if self.taken_t is None else round(self.taken_t, 6),
            **({"data": self.data} if self.data else {}),
        }


class Interrupted(Exception):  # noqa: N818 - a control-flow signal, not an error
    """Raised by an executor whose subgoal an interjection superseded: the world after the
    skill was brought to a safe state, the interjection, and whether the skill was stopped
    or (about to release) finished (``finished``; ``success`` its success test then)."""

    def __init__(
        self,
        interjection: D.Interjection,
        turn: Turn,
        world: WorldState | None = None,
        *,
        finished: bool = False,
        success: bool = False,
    ) -> None:
        super().__init__(interjection.utterance)
        self.interjection = interjection
        self.turn = turn
        self.world = world
        self.finished = finished
        self.success = success


Answerer = Callable[[str, "list[str] | None"], "str | None"]


class Conversation:
    """The turns of one run and its inbox; thread-safe. See the module docstring.

    ``answers``: replies given in advance, used in order for the robot's questions (``run
    --answer``); ``answerer(question, candidates)``: asked when none is left (a terminal
    prompt; None: no answer); ``wait_s``: how long :meth:`ask` then waits for a post (a
    service whose user answers from another thread); ``clock``: seconds, monotonic."""

    def __init__(
        self,
        *,
        answers: Iterable[str] = (),
        answerer: Answerer | None = None,
        wait_s: float = 0.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._lock = threading.Condition()
        self._turns: list[Turn] = []
        self._inbox: deque[Turn] = deque()
        self._answers: deque[str] = deque(str(a) for a in answers)
        #: a tuple, replaced (never changed) when one is added: :meth:`tick` reads it unlocked
        self._hooks: tuple[Callable[[int], None], ...] = ()
        self._subscribers: list[Callable[[Turn], None]] = []
        self.answerer = answerer
        self.wait_s = float(wait_s)
        self.clock = clock
        self._step = 0
        self._closed = False
        #: what the control loop is doing, for reading an interjection against it
        self.task: str | None = None
        self.acting_on: str | None = None

    # ------------------------------------------------------------------ any thread
    def post(self, text: str) -> Turn:
        """A user's utterance (any thread); taken at the next control step."""
        text = " ".join(str(text).split())
        if not text:
            raise ValueError("an empty utterance")
        if len(text) > MAX_TEXT:
            raise ValueError(f"an utterance is at most {MAX_TEXT} characters")
        with self._lock:
            if self._closed:
                raise ConversationClosed("the run has ended")
            if len(self._inbox) >= MAX_PENDING:
                raise ValueError(f"{MAX_PENDING} utterances are already waiting")
            turn = self._add(USER, "message", text, {})
            self._inbox.append(turn)
            self._lock.notify_all()
        self._publish(turn)
        return turn

    def subscribe(self, fn: Callable[[Turn], None]) -> None:
        """Call ``fn(turn)`` for every turn from now on (from the thread that made it)."""
        with self._lock:
            self._subscribers.append(fn)

    def add_step_hook(self, fn: Callable[[int], None]) -> None:
        """Call ``fn(step)`` at every control step, before the inbox is read."""
        with self._lock:
            self._hooks = (*self._hooks, fn)

    @property
    def turns(self) -> list[Turn]:
        with self._lock:
            return list(self._turns)

    @property
    def step(self) -> int:
        with self._lock:
            return self._step

    def pending(self) -> int:
        with self._lock:
            return len(self._inbox)

    def close(self) -> None:
        """The run has ended: later posts are refused, a waiting :meth:`ask` returns."""
        with self._lock:
            self._closed = True
            self._lock.notify_all()

    # ------------------------------------------------------------------ the control loop
    def record(self, role: str, kind: str, text: str, **data: Any) -> Turn:
        """A turn that is not waiting to be taken (the task, the robot's words)."""
        with self._lock:
            turn = self._add(role, kind, text, data)
        self._publish(turn)
        return turn

    def set_context(self, task: str | None, acting_on: str | None = None) -> None:
        """The task under way (as the planners read it) and the block being moved."""
        with self._lock:
            self.task, self.acting_on = task, acting_on

    def tick(self, step: int) -> None:
        """A control step was reached: run the step hooks; nothing is taken. Called at every
        control step, so it takes no lock and copies nothing: storing an int and reading the
        hooks' tuple are atomic (:meth:`post` reads ``_step`` under the lock)."""
        self._step = step
        for fn in self._hooks:
            try:
                fn(step)
            except Exception:  # noqa: BLE001 - a listener's bug must not stop the arm
                log.warning("a step hook failed at step %d", step, exc_info=True)

    def check(
        self, step: int | None, world: Callable[[], WorldState]
    ) -> tuple[D.Interjection, Turn] | None:
        """Run the step hooks (``step`` given: a control step was reached), then take the
        oldest utterance waiting, if any. A question is answered here and the next one is
        looked at; anything else is returned, read against the task under way."""
        if step is not None:
            self.tick(step)
        if not self._inbox:  # the common case, every control step: no lock (len is atomic)
            return None
        while True:
            with self._lock:
                if not self._inbox:
                    return None
                turn = self._inbox.popleft()
                if turn.taken_step is None:
                    turn.taken_step, turn.taken_t = self._step, self.clock()
                task, acting = self.task, self.acting_on
            inter = D.interpret(turn.text, task or "", world(), acting_on=acting)
            turn.data["interjection"] = inter.to_dict()
            if inter.kind == D.QUESTION:
                self.record(ROBOT, "reply", inter.reply or "", to=turn.index)
                continue
            return inter, turn

    def defer(self, turn: Turn) -> None:
        """Put a taken utterance back at the front, for the closed loop to act on (the
        settling before a goal check ends early for it; the loop takes it before its
        verdict). It keeps the step it was taken at."""
        with self._lock:
            self._inbox.appendleft(turn)

    def ask(self, question: str, candidates: list[str] | None = None) -> str | None:
        """Ask ``question``; the reply, or None when nobody answers."""
        self.record(ROBOT, "question", question, candidates=list(candidates or []))
        reply: str | None = None
        said: dict[str, Any] = {}
        with self._lock:
            if self._answers:
                reply, said = self._answers.popleft(), {"given": "in advance"}
            elif self._inbox:
                early = self._inbox.popleft()
                early.taken_step, early.taken_t = self._step, self.clock()
                reply, said = early.text, {"message": early.index}
        if reply is None and self.answerer is not None:
            reply = self.answerer(question, candidates)
        if reply is None and self.wait_s > 0:
            deadline = self.clock() + self.wait_s
            with self._lock:
                while not self._inbox and not self._closed:
                    left = deadline - self.clock()
                    if left <= 0 or not self._lock.wait(timeout=min(left, 0.5)):
                        if self.clock() >= deadline:
                            break
                if self._inbox:
                    late = self._inbox.popleft()
                    late.taken_step, late.taken_t = self._step, self.clock()
                    reply, said = late.text, {"message": late.index}
        if reply is not None:
            reply = " ".join(str(reply).split())[:MAX_TEXT]
            self.record(USER, "answer", reply, **said)
        return reply  # "" is an answer that says nothing: asked again

    # ------------------------------------------------------------------ inside
    def _add(self, role: str, kind: str, text: str, data: dict[str, Any]) -> Turn:
        turn = Turn(len(self._turns), role, kind, text, self._step, self.clock(), dict(data))
        self._turns.append(turn)
        return turn

    def _publish(self, turn: Turn) -> None:
        with self._lock:
            subs = list(self._subscribers)
        for fn in subs:
            try:
                fn(turn)
            except Exception:  # noqa: BLE001, S110 - a listener must not break the robot
                pass


class ScriptedUser:
    """A user who says ``text`` at control step ``step`` (tests, benchmarks, ``run
    --interject STEP:TEXT``): a step hook, so the utterance arrives at that step exactly."""

    def __init__(self, conversation: Conversation, lines: Iterable[tuple[int, str]]) -> None:
        self.conversation = conversation
        self.lines = sorted(lines, key=lambda x: x[0])
        self.said: list[Turn] = []
        conversation.add_step_hook(self)

    def __call__(self, step: int) -> None:
        while self.lines and self.lines[0][0] <= step:
            _, text = self.lines.pop(0)
            try:
                self.said.append(self.conversation.post(text))
            except (ValueError, ConversationClosed) as e:  # a flood, or the run has ended
                log.warning("scripted utterance %r not taken: %s", text[:80], e)
