"""The robot as an MCP server (the ``mcp`` SDK's ``MCPServer``, over stdio):
``skillbridge mcp``.

Why MCP: any MCP client (a desktop assistant, an agent framework) can then drive the
robot with the same five tools as :mod:`skillbridge.agents.tools`. ``run_task`` runs in a
worker thread, so a ``stop`` or an ``answer`` sent while it runs is taken at once. A refused
call (an unknown plan id) is a tool error the client sees as such.
"""

from __future__ import annotations

from typing import Any

from skillbridge.agents.robot import Robot, ToolRefusal
from skillbridge.agents.tools import DESCRIPTIONS


def build_server(robot: Robot) -> Any:
    """An ``MCPServer`` whose tools act on ``robot``."""
    import anyio
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    server = MCPServer(
        "skillbridge",
        instructions="A simulated tabletop robot arm. Plan a task with plan_task, then "
        "run the plan_id it returns with run_task; answer its questions with answer.",
    )

    def refuse(e: Exception) -> Exception:
        return ToolError(str(e))  # the client reads it (is_error), the server logs no crash

    @server.tool(description=DESCRIPTIONS["observe_scene"])
    def observe_scene() -> dict:
        return robot.observe_scene()

    @server.tool(description=DESCRIPTIONS["plan_task"])
    async def plan_task(task: str) -> dict:
        try:
            return await anyio.to_thread.run_sync(robot.plan_task, task)
        except ToolRefusal as e:
            raise refuse(e) from None

    @server.tool(description=DESCRIPTIONS["run_task"])
    async def run_task(plan_id: str, wait: bool = True) -> dict:
        try:
            return await anyio.to_thread.run_sync(robot.run_task, plan_id, wait)
        except ToolRefusal as e:
            raise refuse(e) from None

    @server.tool(description=DESCRIPTIONS["answer"])
    async def answer(text: str) -> dict:
        try:
            return await anyio.to_thread.run_sync(robot.answer, text)
        except ToolRefusal as e:
            raise refuse(e) from None

    @server.tool(description=DESCRIPTIONS["stop"])
    def stop() -> dict:
        return robot.stop()

    return server
