"""The robot as tools for agents: the same operations for a LangChain agent
(:mod:`~skillbridge.agents.tools`) and for any MCP client (:mod:`~skillbridge.agents.mcp`,
``skillbridge mcp``), over one :class:`~skillbridge.agents.robot.Robot`.

Motion needs approval: ``plan_task`` plans and validates through the bridge and returns a
plan id; ``run_task`` executes only a plan id that was planned and validated in the world as
it still is, so no agent moves the arm with unchecked words.
"""
