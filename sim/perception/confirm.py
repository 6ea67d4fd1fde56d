"""Whether this frame's images confirm a verdict taken on the estimate.

A success claimed from cameras (a skill's success test, the closed loop's goal check) is a
verdict on the belief, and a belief can be stale, pieced together or a few millimetres off.
A verdict is confirmed only where every cube it rests on is pinned by this frame's images
and the verdict stays the same with each of those cubes' estimates moved by its possible
error. It rests on the cubes it names and on any other cube without which it would not hold
(``at(red, region)`` holds for a red cube beside a cube in the region: that cube's belief is
as much a part of the claim as the red one's).

A cube's estimate is pinned where its top face was seen this frame, whole or all but a
sliver (at most :data:`PIN_HIDDEN` of it hidden, the estimate where that sliver allows), or
where the fingers hold it. Not pinned: a cube not seen this frame (its last pose kept), one
placed from a face more hidden than that (the prior's least move that holds the points
seen: its error is the hidden part's, up to centimetres), and one placed from its sides
only (a cube under another: where the column above it is). A cube with another believed on
it is seen only in part or by its sides, and for the stacking relation (``on``) that the
column above it confirms it counts as pinned; for anything else (a region's neighbour) it
does not.

The possible error is perception's (:data:`sim.perception.SURE`) and, for a face seen all
but a sliver, the sliver's width (a hidden strip along one edge is the worst case: the
square can slide that far under it).

Pure reads of the belief and the world states built from it (``Perception.world_state``);
the verdict is a callable, so the goal grammar (``bridge``) and the skills (``skills``) both
use it from above.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

from sim import scene
from sim.world import WorldState

#: A verdict on a world state: True where it holds.
Verdict = Callable[[WorldState], bool]
#: The most of a cube's top face that may be hidden for its estimate to count as pinned: a
#: face in full view reads 0.97-1.05 of a whole one, one at a table's far corner or under
#: the arm's edge at home 0.95-0.97; a tenth hidden is a strip 4 mm wide on a 4 cm cube.
PIN_HIDDEN = 0.1


def rests_on(env, holds: Verdict, names: Iterable[str]) -> list[str]:
    """The cubes a verdict that holds on the estimate rests on: ``names`` (those it is
    about, where tracked), then every other tracked cube without which it would not hold."""
    perception = env.perception
    tracks = perception.tracker.belief.tracks
    named = [n for n in dict.fromkeys(names) if n in tracks]
    others = [
        n
        for n in tracks
        if n not in named
        and n != perception.tracker.belief.held
        and not holds(perception.world_state(env, without=n))
    ]
    return named + others


def unpinned(env, names: Iterable[str], stacked: Iterable[str] = ()) -> list[str]:
    """Of ``names``, the cubes this frame's images do not pin (see the module's doc);
    ``stacked``: cubes named by the stacking relation that is the verdict, which for one
    with a cube believed on it is confirmed by the column seen above it (its own faces are
    hidden under that cube, partly or all but its sides)."""
    b = env.perception.tracker.belief
    world = env.perception.world_state(env)
    exempt = {n for n in stacked if world.under(n) is not None}
    out = []
    for n in names:
        t = b.tracks.get(n)
        if t is None or n == b.held:
            continue
        pieced = t.sides_only or t.hidden > PIN_HIDDEN or not _face_agrees(t)
        if n in b.uncertain or (pieced and n not in exempt):
            out.append(n)
    return out


def _face_agrees(t) -> bool:
    """A face seen all but a sliver: the mean of what shows lies within half the sliver's
    width of the face's centre, so an estimate further from it than the sliver is the
    prior's (the least move that holds the points seen stops short), not the images'."""
    if t.hidden <= 0.0 or t.face_xy is None:
        return True
    off = math.hypot(float(t.pos[0]) - t.face_xy[0], float(t.pos[1]) - t.face_xy[1])
    return off <= t.hidden * 2 * scene.CUBE_HALF


def error_radius(env, name: str) -> float:
    """How far (m) a pinned cube's estimate may be off: perception's error, and the width
    of the strip of its face this frame did not see."""
    from sim.perception import SURE

    t = env.perception.tracker.belief.tracks[name]
    return SURE + min(t.hidden, PIN_HIDDEN) * 2 * scene.CUBE_HALF


def unconfirmed(
    env,
    holds: Verdict,
    names: Iterable[str],
    stacked: Iterable[str] = (),
    extra: Iterable[str] = (),
) -> list[str]:
    """Why a verdict that holds on the estimate is not confirmed by this frame's images:
    the cubes it rests on that they do not pin, else (all pinned) those whose estimate
    moved by its possible error (:func:`error_radius`, ``Perception.worlds_near``) changes
    the verdict; empty where it is confirmed. ``extra``: other beliefs it rests on
    (``"drawer"``, ``"light"``) that count as unconfirmed where the tracker calls them
    uncertain."""
    b = env.perception.tracker.belief
    support = rests_on(env, holds, names)
    out = [n for n in extra if n in b.uncertain] + unpinned(env, support, stacked)
    if out:
        return out
    for n in support:
        near = env.perception.worlds_near(env, [n], error_radius(env, n))
        if not all(holds(w) for w in near):
            out.append(n)
    return out
