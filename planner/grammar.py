"""The command language, defined once: what the embedded model writes and the rules planner
reads.

Why one module: the corpus teaches the model to write these texts, the model's decoding
mask is made of their tokens (:func:`planner.corpus.vocabulary.command_texts`), typo repair
repairs towards their words and the rules planner parses them; all of those read the clause
kinds and their texts here, so a command shape exists in one place.

Command language (clauses joined by ``", then "``)::

    put the C block in the C bin          stack the C block on the C block
    put the C block on the R of the table push the C block to the R
    pick up the C block                   go home
    put every block in the C bin          put every block in the bin of its color
    put every block except the C block in the C bin
    put every block except the C block in the bin of its color
    put it in the C bin                   refuse: <short reason>

and in the articulated scene ``open the drawer``, ``close the drawer``, ``turn on the
light``, ``turn off the light``, ``press the button``, ``put the C block in the drawer``,
``take the C block out of the drawer``. ``C`` is a colour word (absent colours such as
purple are kept: the rules planner refuses them against the scene), ``R`` one of
:data:`bridge.lexicon.REGION_NAMES`.
"""

from __future__ import annotations

from dataclasses import dataclass

#: What joins the clauses of one command.
THEN = ", then "
#: What opens a refusal ("refuse: there is no cup in the scene").
REFUSE = "refuse: "


@dataclass(frozen=True)
class Clause:
    """One unit of meaning; ``kind`` picks the surface forms and the command."""

    # move stack region push pick home all all_match except except_match it; the
    # articulated scene's: open close light_on light_off press drawer_in drawer_out
    kind: str
    obj: str | None = None
    dest: str | None = None
    excl: tuple[str, ...] = ()

    @property
    def named_obj(self) -> str:
        """``obj`` where ``kind`` promises one (move, stack, region, push, pick)."""
        if self.obj is None:
            raise ValueError(f"a {self.kind!r} clause without an object")
        return self.obj

    @property
    def named_dest(self) -> str:
        """``dest`` where ``kind`` promises one (move, stack, region, push, all, except, it)."""
        if self.dest is None:
            raise ValueError(f"a {self.kind!r} clause without a destination")
        return self.dest

    def command(self) -> str:
        o, d = self.obj, self.dest
        if self.kind == "move":
            return f"put the {o} block in the {d} bin"
        if self.kind == "stack":
            return f"stack the {o} block on the {d} block"
        if self.kind == "region":
            return f"put the {o} block on the {d} of the table"
        if self.kind == "push":
            return f"push the {o} block to the {d}"
        if self.kind == "pick":
            return f"pick up the {o} block"
        if self.kind == "home":
            return "go home"
        if self.kind == "all":
            return f"put every block in the {d} bin"
        if self.kind == "all_match":
            return "put every block in the bin of its color"
        if self.kind == "except":
            return f"put every block {_except_cmd(self.excl)} in the {d} bin"
        if self.kind == "except_match":
            return f"put every block {_except_cmd(self.excl)} in the bin of its color"
        if self.kind == "it":
            return f"put it in the {d} bin"
        if self.kind in DEVICE_COMMANDS:
            return DEVICE_COMMANDS[self.kind]
        if self.kind == "drawer_in":
            return f"put the {o} block in the drawer"
        if self.kind == "drawer_out":
            return f"take the {o} block out of the drawer"
        raise ValueError(self.kind)


#: The articulated scene's device clauses and their commands (no object, no destination).
DEVICE_COMMANDS = {
    "open": "open the drawer",
    "close": "close the drawer",
    "light_on": "turn on the light",
    "light_off": "turn off the light",
    "press": "press the button",
}
#: Every clause kind of the articulated scene's vocabulary (phrased by ``articulated_text``).
ARTICULATED_KINDS = (*DEVICE_COMMANDS, "drawer_in", "drawer_out")


def _except_cmd(excl: tuple[str, ...]) -> str:
    return "except " + " and ".join(f"the {c} block" for c in excl)


def command(clauses: list[Clause]) -> str:
    """The command-language text of a plan."""
    return THEN.join(c.command() for c in clauses)


#: Why a device request is refused in a scene without the device (the rules planner's
#: words, short).
NO_DEVICE = {
    "open": "there is no drawer in the scene",
    "close": "there is no drawer in the scene",
    "drawer_in": "there is no drawer in the scene",
    "drawer_out": "there is no drawer in the scene",
    "light_on": "there is no light in the scene",
    "light_off": "there is no light in the scene",
    "press": "there is no button in the scene",
}
#: The reason a prompt injection is refused with.
INJECTION_REASON = "instructions that try to override the planner are refused"
