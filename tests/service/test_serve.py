"""A real ``skillbridge serve`` on 127.0.0.1, driven over HTTP and server-sent events.

One server for the module (its worker loads the policies once): a task whose clarifying
question is answered, a correction while the arm moves, a stop, episodes, and the limits.
Every goal is judged in the world from physics (the run's own goal check), not by the
events' words.
"""

from __future__ import annotations

import base64
import io

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("sse_starlette")

from skillbridge.service.client import Client  # noqa: E402


@pytest.fixture
def client(server):
    c = Client(server[0])
    yield c
    c.close()


def _collect(c: Client, sid: str, react=None, frames: bool = True) -> list[tuple[str, dict]]:
    got = []
    for kind, ev in c.events(sid, frames=frames):
        assert ev["session"] == sid
        got.append((kind, ev))
        if react is not None:
            react(kind, ev)
    return got


def _kinds(events) -> list[str]:
    return [k for k, _ in events]


def _result(events) -> dict:
    done = [ev for k, ev in events if k == "done"]
    assert done, f"no result; events: {_kinds(events)}"
    return done[-1]["data"]["result"]


def _met(result: dict, predicate: str) -> bool:
    return any(e["predicate"] == predicate and e["met"] for e in result["goal_evaluation"] or [])


def test_task_with_a_question_answered(client):
    sid = client.session(seed=0, fps=5)
    assert client.say(sid, "task", "put the block in the green bin").status_code == 202

    def react(kind, ev):
        if kind == "question":
            assert "red" in ev["data"]["question"]
            assert client.say(sid, "answer", "the red one").status_code == 202

    events = _collect(client, sid, react)
    kinds = _kinds(events)
    for k in (
        "queued",
        "running",
        "start",
        "question",
        "answer",
        "bridge",
        "plan",
        "subgoal_start",
        "subgoal_end",
        "goal_check",
        "frame",
        "done",
    ):
        assert k in kinds, (k, kinds)
    assert kinds.index("question") < kinds.index("answer") < kinds.index("plan")
    plan = next(ev["data"] for k, ev in events if k == "plan")
    assert plan["steps"][0] == {"skill": "pick", "object": "red_block"}
    r = _result(events)
    assert r["status"] == "success" and _met(r, "in(red_block, green_bin)")
    assert r["final_world"]["objects"]
    # a frame is a real image of the configured size
    from PIL import Image

    frame = next(ev["data"] for k, ev in events if k == "frame")
    img = Image.open(io.BytesIO(base64.b64decode(frame["data"])))
    assert img.format == "JPEG" and img.size == (frame["width"], frame["height"])
    lo, hi = img.convert("L").getextrema()
    assert hi - lo > 30  # not a blank picture
    # the episode is listed for the session and readable, its trace has the turns
    eps = client.http.get("/episodes", params={"session": sid}).json()
    assert [e["name"] for e in eps] == [r["episode"]]
    ep = client.http.get(f"/episodes/{r['episode']}").json()
    assert ep["result"] == "success"
    assert any(t.get("kind") == "turn" and t.get("act") == "answer" for t in ep["trace"])


def test_correction_mid_task_then_the_next_task_continues(client):
    sid = client.session(seed=0, fps=25)  # a frame every step: the arm moves slower
    client.say(sid, "task", "put the red block in the green bin")
    said = []

    def react(kind, ev):
        if kind == "subgoal_start" and not said:
            said.append(client.say(sid, "correction", "no, put it in the blue bin instead"))

    events = _collect(client, sid, react)
    assert said and said[0].status_code == 202
    kinds = _kinds(events)
    assert "interjection" in kinds and "post_refused" not in kinds
    inter = next(ev["data"] for k, ev in events if k == "interjection")
    assert inter["reading"] == "correction" and "blue" in (inter["task"] or "")
    r = _result(events)
    assert r["status"] == "success", r["message"]
    assert _met(r, "in(red_block, blue_bin)")
    # the session's world goes on: the next task starts where this one ended
    client.say(sid, "task", "put the yellow block in the green bin")
    r2 = _result(_collect(client, sid, frames=False))
    assert r2["status"] == "success"
    world = {o["name"]: o for o in r2["final_world"]["objects"]}
    assert world["red_block"]["in_bin"] == "blue_bin", world["red_block"]


def test_stop_mid_task(client):
    sid = client.session(seed=1, fps=25)
    client.say(sid, "task", "put the blue block in the red bin")
    stopped = []

    def react(kind, ev):
        if kind == "subgoal_start" and not stopped:
            stopped.append(client.say(sid, "stop", "stop"))

    events = _collect(client, sid, react)
    assert stopped[0].json()["accepted"] is True
    r = _result(events)
    assert r["status"] == "stopped"
    kinds = _kinds(events)
    # nothing of the superseded plan starts after the stop was taken
    at = kinds.index("interjection")
    assert "subgoal_start" not in kinds[at:]
    assert not _met(r, "in(blue_block, red_bin)")


def test_messages_that_cannot_be_taken(client):
    sid = client.session()
    assert client.say(sid, "answer", "the red one").status_code == 409  # nothing asked
    assert client.say(sid, "task", "").status_code == 422
    assert client.say(sid, "shout", "x").status_code == 422
    assert client.say(sid, "stop").json()["accepted"] is False
    assert client.http.post("/sessions/nope/messages", json={"kind": "stop"}).status_code == 404
    assert client.http.post("/sessions", json={"cubes": ["purple"]}).status_code == 422
    assert client.http.post("/sessions", json={"fps": 1000}).status_code == 422


@pytest.mark.parametrize(
    "name",
    ["..", "../etc", "%2e%2e", ".hidden", "a/../../etc", "%2Fetc%2Fpasswd", "x" * 300],
)
def test_no_path_outside_the_runs_folder(client, name):
    r = client.http.get(f"/episodes/{name}")
    # 404, or a client that resolved ".." asked for another route (the page, the listing)
    assert r.status_code == 404 or r.request.url.path in ("/", "/episodes", "/episodes/")
    assert "root:" not in r.text
    sid = client.session()
    assert client.http.post(f"/sessions/{sid}/replay", json={"episode": name}).status_code in (
        404,
        422,
    )


def test_a_link_in_the_runs_folder_is_not_an_episode(client, server, tmp_path):
    runs = server[1]
    (runs / "20990101-000000-link").symlink_to(tmp_path)
    assert client.http.get("/episodes/20990101-000000-link").status_code == 404
    assert "20990101-000000-link" not in [e["name"] for e in client.http.get("/episodes").json()]


def test_body_size_limit(client):
    r = client.http.post(
        "/sessions",
        content=b"{" + b" " * 70_000 + b"}",
        headers={"content-type": "application/json"},
    )
    assert r.status_code == 413


def test_replay_streams_frames(client):
    eps = client.http.get("/episodes").json()
    assert eps
    sid = client.session(fps=5)
    r = client.http.post(f"/sessions/{sid}/replay", json={"episode": eps[0]["name"], "fps": 25})
    assert r.status_code == 202
    events = _collect(client, sid)
    kinds = _kinds(events)
    assert kinds[-1] == "replay_end" and kinds.count("frame") >= 3, kinds


def test_look_renders_the_scene(client):
    sid = client.session(seed=3, cubes=["red", "blue"])
    assert client.http.post(f"/sessions/{sid}/look").status_code == 202
    events = _collect(client, sid)
    scene = next(ev["data"] for k, ev in events if k == "scene")
    names = sorted(o["name"] for o in scene["world"]["objects"])
    assert names == ["blue_block", "red_block"]
    assert "frame" in _kinds(events)


def test_openapi_and_page(client):
    spec = client.http.get("/openapi.json").json()
    assert "/sessions/{sid}/messages" in spec["paths"]
    assert client.http.get("/docs").status_code == 200
    page = client.http.get("/")
    assert page.status_code == 200 and "skillbridge" in page.text


def test_the_readme_client_example_runs(server, capsys):
    """The README's "Drive it from another program" example, against the real server."""
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    section = text.split("## Drive it from another program", 1)[1]
    (code,) = re.findall(r"```py\n(.*?)```", section.split("\n## ", 1)[0], flags=re.S)
    code = code.replace('"http://127.0.0.1:8000"', repr(server[0]))
    exec(compile(code, "README.md", "exec"), {})
    printed = capsys.readouterr().out
    assert "'predicate': 'in(red_block, blue_bin)', 'met': True" in printed, printed
