"""The robot as tools for agents: LangChain tools in-process, and ``skillbridge mcp`` (a
real server process over stdio) driven by the MCP SDK's own client. Motion needs a plan id
that plan_task validated; goals are checked in the world after the run."""

from __future__ import annotations

import json
import os
import sys

import pytest

TOOLS = ["answer", "observe_scene", "plan_task", "run_task", "stop"]


def _met(result: dict, predicate: str) -> bool:
    return any(e["predicate"] == predicate and e["met"] for e in result["goal_evaluation"] or [])


def test_langchain_tools_plan_approve_run(tmp_path):
    from skillbridge.agents.robot import Robot
    from skillbridge.agents.tools import robot_tools

    tools = {t.name: t for t in robot_tools(Robot(llm="rules", runs=tmp_path))}
    assert sorted(tools) == TOOLS
    asked = json.loads(tools["plan_task"].invoke({"task": "put the block in the blue bin"}))
    assert asked["status"] == "clarify" and "yellow_block" in asked["candidates"]
    plan = json.loads(tools["answer"].invoke({"text": "the yellow one"}))
    assert plan["status"] == "planned", plan
    assert plan["steps"][0] == {"skill": "pick", "object": "yellow_block"}
    bad = json.loads(tools["run_task"].invoke({"plan_id": "not-a-plan"}))
    assert "unknown plan id" in bad["error"]
    result = json.loads(tools["run_task"].invoke({"plan_id": plan["plan_id"]}))
    assert result["status"] == "success" and _met(result, "in(yellow_block, blue_bin)")
    again = json.loads(tools["run_task"].invoke({"plan_id": plan["plan_id"]}))
    assert "unknown plan id" in again["error"]  # an approval is spent by its run
    # the scene persists: the block is still in the bin for the next observation
    world = json.loads(tools["observe_scene"].invoke({}))["world"]
    yellow = next(o for o in world["objects"] if o["name"] == "yellow_block")
    assert yellow["in_bin"] == "blue_bin"


def test_a_plan_made_before_another_run_is_stale(tmp_path):
    from skillbridge.agents.robot import Robot, ToolRefusal

    robot = Robot(llm="rules", runs=tmp_path)
    a = robot.plan_task("put the red block in the green bin")
    b = robot.plan_task("put the blue block in the red bin")
    assert robot.run_task(a["plan_id"])["success"]
    with pytest.raises(ToolRefusal):
        robot.run_task(b["plan_id"])  # planned in a world that no longer is


def test_refusals_are_not_plans(tmp_path):
    from skillbridge.agents.robot import Robot

    robot = Robot(llm="rules", runs=tmp_path)
    r = robot.plan_task("put the purple block in the green bin")
    assert r["status"] != "planned" and "plan_id" not in r
    assert robot.plan_task("what is on the table?")["status"] == "answer"
    assert robot.stop()["status"] == "idle"


def test_mcp_server_over_stdio(tmp_path):
    pytest.importorskip("mcp")
    import anyio
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "skillbridge.cli", "mcp", "--llm", "rules", "--runs", str(tmp_path)],
        env={**os.environ, "MUJOCO_GL": os.environ.get("MUJOCO_GL", "egl")},
    )

    def data(res) -> dict:
        assert res.content, res
        return json.loads(res.content[0].text)

    async def drive() -> None:
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                names = sorted(t.name for t in (await s.list_tools()).tools)
                assert names == TOOLS
                refused = await s.call_tool("run_task", {"plan_id": "deadbeef0000"})
                assert refused.is_error
                assert "unknown plan id" in refused.content[0].text
                plan = data(
                    await s.call_tool("plan_task", {"task": "put the red block in the green bin"})
                )
                assert plan["status"] == "planned"
                done = await s.call_tool("run_task", {"plan_id": plan["plan_id"]})
                assert not done.is_error, done
                r = data(done)
                assert r["status"] == "success" and _met(r, "in(red_block, green_bin)")
                scene = data(await s.call_tool("observe_scene", {}))
                red = next(o for o in scene["world"]["objects"] if o["name"] == "red_block")
                assert red["in_bin"] == "green_bin"

    anyio.run(drive)
