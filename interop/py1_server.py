"""A 2025-era MCP server built on the official Python SDK 1.x
(`mcp==1.30.0`, `FastMCP`), with the surface `py_client.py` drives: echo,
progress, elicit, sample, roots (standalone server-to-client requests, the
2025 way), add_tool, a prompt with a completion, a resource, and
`slow`/`last_slow` to see a cancellation arrive.

    py1_server.py stdio
    py1_server.py http PORT      (Streamable HTTP at /mcp)
"""

import sys

import anyio
from mcp import types
from mcp.server.fastmcp import Context, FastMCP
from pydantic import BaseModel

server = FastMCP("py-2025")


class Name(BaseModel):
    name: str


@server.tool()
def echo(text: str) -> str:
    """Echoes the text."""
    return text


@server.tool()
async def progress(steps: int, delay_ms: int, ctx: Context) -> str:
    """Reports a progress notification per step."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps)
    return f"done {steps}"


@server.tool()
async def elicit(message: str, ctx: Context) -> str:
    """Asks the user for a name."""
    answer = await ctx.elicit(message, Name)
    return f"elicited: {answer.action} {answer.data.model_dump_json() if answer.data else ''}"


@server.tool()
async def sample(prompt: str, ctx: Context) -> str:
    """Asks the client's model."""
    result = await ctx.session.create_message(
        messages=[types.SamplingMessage(role="user", content=types.TextContent(type="text", text=prompt))],
        max_tokens=20,
    )
    return f"sampled: {result.content.text}"


@server.tool()
async def roots(ctx: Context) -> str:
    """Lists the client's roots."""
    result = await ctx.session.list_roots()
    return result.model_dump_json(exclude_none=True)


@server.tool()
async def add_tool(name: str, ctx: Context) -> str:
    """Adds an echo-like tool."""
    server.add_tool(lambda text="": text, name=name, description="Echoes, like echo.")
    await ctx.session.send_tool_list_changed()
    return f"added {name}"


# What became of the last `slow` call: running, finished or cancelled.
slow_state = {"last": "none"}


@server.tool()
async def slow(ms: int) -> str:
    """Sleeps, to be cancelled."""
    slow_state["last"] = "running"
    try:
        await anyio.sleep(ms / 1000)
    except anyio.get_cancelled_exc_class():
        slow_state["last"] = "cancelled"
        raise
    slow_state["last"] = "finished"
    return "slept"


@server.tool()
def last_slow() -> str:
    """What became of the last slow call."""
    return slow_state["last"]


@server.completion()
async def complete(ref, argument, context):
    return types.Completion(values=[name for name in ("alice", "bob") if name.startswith(argument.value)])


@server.prompt()
def greeting(name: str = "world") -> str:
    """A greeting."""
    return f"Hello, {name}!"


@server.resource("fixture://readme", mime_type="text/plain")
def readme() -> str:
    """A readme."""
    return "Python 1.x readme"


if __name__ == "__main__":
    if sys.argv[1] == "stdio":
        server.run("stdio")
    else:
        server.settings.host = "127.0.0.1"
        server.settings.port = int(sys.argv[2])
        server.run("streamable-http")
