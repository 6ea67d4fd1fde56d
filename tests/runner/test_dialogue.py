"""The dialogue without physics: answers read against the question's candidates, the
conversation object (threads, hooks, asking), and the closed loop asking and taking
corrections (symbolic executor with control steps)."""

from __future__ import annotations

import threading

import pytest

from planner import dialogue as D
from planner.conversation import Conversation, ConversationClosed, ScriptedUser
from planner.hybrid import HybridPlanner
from planner.loop import run_closed_loop
from planner.understand import understand
from tests.runner.symbolic import STEPS, SteppedExecutor
from tests.worlds import cube, world

TASK = "put the block in the green bin"


@pytest.fixture
def scene():
    """Four cubes; the yellow one is the leftmost (the robot's left is +y)."""
    return world(
        [
            cube("red_block", (-0.1, -0.12, 0.02)),
            cube("green_block", (0.0, -0.12, 0.02)),
            cube("blue_block", (0.1, -0.12, 0.02)),
            cube("yellow_block", (0.15, -0.02, 0.02)),
        ]
    )


def _q(text, w):
    u = understand(text, w)
    assert u.kind == "clarify", u
    return u


# ----------------------------------------------------------------------------- answers
@pytest.mark.parametrize(
    "answer, choice",
    [
        ("the red one", "red_block"),
        ("Red.", "red_block"),
        ("crimson", "red_block"),  # a shade
        ("the left one", "yellow_block"),  # a selector among the candidates
        ("the first", "red_block"),  # the order the question named them in
        ("the second one", "green_block"),
        ("the last one", "yellow_block"),
        ("2", "green_block"),
        ("el rojo", "red_block"),  # other languages
        ("die blaue", "blue_block"),
        ("la primera", "red_block"),
        ("赤いの", "red_block"),
        ("any of them", "red_block"),
    ],
)
def test_an_answer_picks_one_candidate_and_resolves_the_task(scene, answer, choice):
    r = D.resolve_answer(_q(TASK, scene), answer, scene)
    assert r.kind == D.ANSWERED and r.choice == choice
    assert r.task == f"put the {choice.split('_')[0]} block in the green bin"
    # the resolved task is a plan now: nothing is asked again
    assert understand(r.task, scene).kind == "plan"


@pytest.mark.parametrize("answer", ["hmm", "whatever you like to say", "", "the blue bin"])
def test_a_non_answer_is_unclear(scene, answer):
    r = D.resolve_answer(_q(TASK, scene), answer, scene)
    assert r.kind == D.UNCLEAR and r.task is None


def test_a_bin_question_and_a_place_question(scene):
    r = D.resolve_answer(_q("put the red block in the bin", scene), "the blue one", scene)
    assert r.task == "put the red block in the blue bin"
    r = D.resolve_answer(_q("put the red block over there", scene), "green", scene)
    assert r.task == "put the red block in the green bin"


def test_a_whole_command_as_answer_is_a_new_task_and_stop_stops(scene):
    q = _q(TASK, scene)
    r = D.resolve_answer(q, "put the yellow block in the red bin", scene)
    assert r.kind == D.NEW_TASK and r.task == "put the yellow block in the red bin"
    assert D.resolve_answer(q, "never mind", scene).kind == D.STOPPED


# ----------------------------------------------------------------------------- interjections
@pytest.mark.parametrize(
    "said, kind, task",
    [
        ("stop", D.STOP, None),
        ("Stop!", D.STOP, None),
        ("not that one, the yellow one", D.CORRECTION, "put the yellow block in the green bin"),
        # the block being moved is corrected, not the bin of the same colour
        ("not that one, the green one", D.CORRECTION, "put the green block in the green bin"),
        ("no, the yellow one in the red bin", D.CORRECTION, "put the yellow block in the red bin"),
        ("put it in the blue bin instead", D.CORRECTION, "put the red block in the blue bin"),
        ("no, the blue bin", D.CORRECTION, "put the red block in the blue bin"),
        (
            "also put the blue block in the red bin",
            D.ADDITION,
            "put the red block in the green bin, then put the blue block in the red bin",
        ),
        (
            "put the blue block in the red bin as well",
            D.ADDITION,
            "put the red block in the green bin, then put the blue block in the red bin",
        ),
        ("put the green block in the red bin", D.REPLACE, "put the green block in the red bin"),
    ],
)
def test_interjections_read_against_the_task(scene, said, kind, task):
    i = D.interpret(said, "put the red block in the green bin", scene, acting_on="red_block")
    assert i.kind == kind and i.task == task
    assert i.stops_motion


def test_a_question_is_answered_and_stops_nothing(scene):
    i = D.interpret("where is the red block?", "put the red block in the green bin", scene)
    assert i.kind == D.QUESTION and not i.stops_motion and "red block" in i.reply.lower()


def test_a_held_block_the_new_task_does_not_name_is_put_down_first(scene):
    held = world(
        [cube("red_block", (0.0, 0.0, 0.12), held=True), cube("yellow_block")], held="red_block"
    )
    assert D.put_down_first("put the yellow block in the green bin", held).startswith(
        "put the red block on the table center, then "
    )
    assert D.put_down_first("put the red block in the blue bin", held) == (
        "put the red block in the blue bin"
    )
    # the held block's colour as a bin's is no mention of the block
    assert D.put_down_first("put the yellow block in the red bin", held).startswith(
        "put the red block on the table center, then "
    )


# ----------------------------------------------------------------------------- conversation
def test_posts_from_many_threads_are_all_taken_once_in_order(scene):
    conv = Conversation()
    conv.set_context("put the red block in the green bin")

    def say(n):
        for k in range(20):
            conv.post(f"where is the red block? ({n}.{k})")

    threads = [threading.Thread(target=say, args=(n,)) for n in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert conv.pending() == 60
    assert conv.check(5, lambda: scene) is None  # questions: all answered, nothing stops
    msgs = [t for t in conv.turns if t.kind == "message"]
    replies = [t for t in conv.turns if t.kind == "reply"]
    assert len(msgs) == 60 and len(replies) == 60 and conv.pending() == 0
    assert all(m.taken_step == 5 for m in msgs)
    assert [r.data["to"] for r in replies] == [m.index for m in msgs]  # in posting order


def test_a_step_hook_posts_at_its_step_and_the_inbox_is_bounded(scene):
    conv = Conversation(clock=lambda: 42.0)
    ScriptedUser(conv, [(3, "stop")])
    conv.set_context("put the red block in the green bin")
    assert conv.check(2, lambda: scene) is None
    inter, turn = conv.check(3, lambda: scene)
    assert inter.kind == D.STOP and turn.step == 3 and turn.taken_step == 3 and turn.t == 42.0
    for _ in range(64):
        conv.post("stop")
    with pytest.raises(ValueError):
        conv.post("stop")
    with pytest.raises(ValueError):
        conv.post("   ")
    conv.close()
    with pytest.raises(ConversationClosed):
        Conversation.post(conv, "stop")


def test_ask_takes_answers_in_advance_then_the_inbox_then_a_wait():
    conv = Conversation(answers=["red"], wait_s=5.0)
    assert conv.ask("Which block?") == "red"
    conv.post("blue")
    assert conv.ask("Which block?") == "blue"
    t = threading.Timer(0.05, conv.post, args=("green",))
    t.start()
    assert conv.ask("Which block?") == "green"  # posted from another thread while waiting
    t.join()
    quiet = Conversation()
    assert quiet.ask("Which block?") is None
    kinds = [(t.role, t.kind) for t in conv.turns]
    assert kinds.count(("robot", "question")) == 3 and kinds.count(("user", "answer")) == 3


# ----------------------------------------------------------------------------- closed loop
def _run(task, w, conv, **kw):
    ex = SteppedExecutor(w, conv)
    r = run_closed_loop(task, w, ex, planner=HybridPlanner(), conversation=conv, **kw)
    return r, ex


def test_the_loop_asks_reasks_once_and_runs_the_resolved_task(scene):
    conv = Conversation(answers=["erm", "the left one"])
    r, ex = _run(TASK, scene, conv)
    assert r.status == "success" and r.task == "put the yellow block in the green bin"
    assert r.world.in_("yellow_block", "green_bin")
    said = [(t["role"], t["kind"]) for t in r.turns]
    assert said[:5] == [
        ("user", "task"),
        ("robot", "question"),
        ("user", "answer"),
        ("robot", "question"),
        ("user", "answer"),
    ]
    assert r.turns[3]["text"].startswith("Sorry, I did not get that.")


def test_without_an_answer_the_question_ends_the_run(scene):
    r, ex = _run(TASK, scene, Conversation())
    assert r.status == "clarify" and r.question.startswith("Which block") and not ex.motion
    r, ex = _run(TASK, scene, Conversation(answers=["no idea"] * 5))
    assert r.status == "clarify" and not ex.motion
    asked = [t for t in r.turns if t["kind"] == "question"]
    assert len(asked) == 1 + D.MAX_REASKS  # bounded


def test_two_questions_in_a_row(scene):
    conv = Conversation(answers=["the red one", "the blue one"])
    r, _ = _run("put the block in the bin", scene, conv)
    assert r.status == "success" and r.world.in_("red_block", "blue_bin")


@pytest.mark.parametrize("at", [3, STEPS + 4])
def test_a_correction_is_taken_at_its_step_and_the_old_plan_never_moves_again(scene, at):
    conv = Conversation()
    ScriptedUser(conv, [(at, "not that one, the yellow one")])
    r, ex = _run("put the red block in the green bin", scene, conv)
    assert r.status == "success"
    assert r.world.in_("yellow_block", "green_bin") and not r.world.in_("red_block", "green_bin")
    assert not r.world.held_object
    stopped = ex.interrupted[0]
    # nothing of the superseded subgoal (or plan) moves from the step it was taken at; the
    # new plan's first subgoal is the first motion after it
    after = [(call, s) for k, call, s in ex.motion if k >= at]
    assert all(call > stopped for call, _ in after)
    assert after[0][1] == r.plans[1].steps()[0]
    assert r.interjections[0]["taken_step"] == at and r.interjections[0]["kind"] == "correction"
    interrupted = [h for h in r.executed if h.get("interrupted")]
    assert len(interrupted) == 1 and "not that one" in interrupted[0]["detail"]


def test_stop_stops_and_an_addition_keeps_the_first_goal(scene):
    conv = Conversation()
    ScriptedUser(conv, [(4, "stop")])
    r, ex = _run("put the red block in the green bin", scene, conv)
    assert r.status == "stopped" and max(k for k, _, _ in ex.motion) == 3
    conv = Conversation()
    ScriptedUser(conv, [(12, "also put the blue block in the red bin")])
    r, _ = _run("put the red block in the green bin", scene, conv)
    assert r.status == "success"
    assert r.world.in_("red_block", "green_bin") and r.world.in_("blue_block", "red_bin")
    assert set(r.goal) == {"in(red_block, green_bin)", "in(blue_block, red_bin)"}


def test_a_question_while_it_works_is_answered_and_nothing_stops(scene):
    conv = Conversation()
    ScriptedUser(conv, [(5, "is the red block in the green bin?")])
    r, ex = _run("put the red block in the green bin", scene, conv)
    assert r.status == "success" and not r.interjections
    assert len(ex.motion) == 2 * STEPS  # the plan ran uninterrupted
    assert any(t["kind"] == "reply" for t in r.turns)


def test_a_second_interjection_is_read_against_the_task_the_first_made(scene):
    conv = Conversation()
    ScriptedUser(
        conv, [(4, "put it in the blue bin instead"), (18, "also put the green one in the red bin")]
    )
    r, _ = _run("put the red block in the green bin", scene, conv)
    assert [i["kind"] for i in r.interjections] == ["correction", "addition"]
    assert r.status == "success"
    assert r.world.in_("red_block", "blue_bin") and r.world.in_("green_block", "red_bin")


def test_a_failing_step_hook_or_listener_does_not_stop_the_loop(scene):
    conv = Conversation()

    def broken(step):
        raise RuntimeError("a listener's bug")

    conv.add_step_hook(broken)
    conv.subscribe(lambda turn: 1 / 0)
    ScriptedUser(conv, [(2, "stop")])
    r, ex = _run("put the red block in the green bin", scene, conv)
    assert r.status == "stopped" and len(ex.motion) == 2


class _Unsure:
    """A model that proposes a valid plan but is unsure of it (its lowest token
    probability 0.1): the planner asks back "Do you mean: ...?" without candidates."""

    name = "unsure-model"

    def propose(self, request):
        import json

        from bridge.policy import Proposal

        steps = [
            {"skill": "pick", "object": "red_block"},
            {"skill": "place", "target": "green_bin"},
        ]
        meta = {"confidence": 0.1, "command": "put the red block in the green bin"}
        return Proposal(raw=json.dumps({"steps": steps}), meta=meta)


def _unsure_run(scene, conv):
    ex = SteppedExecutor(scene, conv)
    planner = HybridPlanner(_Unsure(), ask_below=0.5)
    return run_closed_loop(
        "do the usual with the red one", scene, ex, planner=planner, conversation=conv
    ), ex


@pytest.mark.parametrize("reply", ["yes", "Yes please", "sí", "はい"])
def test_an_unsure_plan_confirmed_runs_the_command_it_said(scene, reply):
    r, ex = _unsure_run(scene, Conversation(answers=[reply]))
    assert r.status == "success" and r.task == "put the red block in the green bin"
    assert r.world.in_("red_block", "green_bin")
    assert r.turns[1]["text"].startswith("I am not sure I understood. Do you mean:")


def test_an_unsure_plan_denied_asks_what_instead_or_ends_with_the_question(scene):
    conv = Conversation(answers=["no", "put the blue block in the red bin"])
    r, _ = _unsure_run(scene, conv)
    assert r.status == "success" and r.world.in_("blue_block", "red_bin")
    assert not r.world.in_("red_block", "green_bin")
    assert [t["text"] for t in r.turns if t["kind"] == "question"][
        -1
    ] == "What should I do instead?"
    r, ex = _unsure_run(scene, Conversation())
    assert r.status == "clarify" and r.question.startswith("I am not sure") and not ex.motion
    r, ex = _unsure_run(scene, Conversation(answers=["stop"]))
    assert r.status == "stopped" and not ex.motion


def test_confirmation_readings(scene):
    assert D.confirmation("yes", scene) == (D.YES, None)
    assert D.confirmation("nope", scene) == (D.NO, None)
    assert D.confirmation("nein", scene) == (D.NO, None)
    assert D.confirmation("never mind", scene) == (D.STOPPED, None)
    assert D.confirmation("no, stop", scene) == (D.STOPPED, None)
    assert D.confirmation("put the blue block in the red bin", scene) == (
        D.NEW_TASK,
        "put the blue block in the red bin",
    )
    assert D.confirmation("hmm", scene)[0] == D.UNCLEAR
