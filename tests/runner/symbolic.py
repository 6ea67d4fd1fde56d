"""A symbolic executor with control steps: each subgoal takes a fixed number of steps, the
conversation is polled at every one, and an interjection stops the subgoal before its
effect (no physics, so the closed loop's dialogue is tested in milliseconds).

A plain module, not ``conftest``: tests import it."""

from __future__ import annotations

import skills
from bridge.models import SUBGOAL_ADAPTER
from planner.conversation import Conversation, Interrupted

#: Control steps a symbolic subgoal takes.
STEPS = 10


class SteppedExecutor:
    """``execute(step) -> (ok, world)`` for :func:`planner.loop.run_closed_loop`."""

    def __init__(self, world, conversation: Conversation | None, steps: int = STEPS):
        self.world = world
        self.conv = conversation
        self.steps = steps
        self.clock = 0  # control steps so far
        #: (control step, call, subgoal) of every step commanded; ``call`` counts the
        #: subgoals started
        self.motion: list[tuple[int, int, dict]] = []
        self.calls = 0
        self.interrupted: list[int] = []  # the calls an interjection stopped

    def __call__(self, step: dict):
        self.calls += 1
        for _ in range(self.steps):
            if self.conv is not None:
                got = self.conv.check(self.clock, lambda: self.world)
                if got is not None:
                    self.interrupted.append(self.calls)
                    raise Interrupted(*got, self.world)
            self.motion.append((self.clock, self.calls, dict(step)))
            self.clock += 1
        sub = SUBGOAL_ADAPTER.validate_python(step)
        self.world = skills.get(step["skill"]).effect(self.world, sub)
        return True, self.world
