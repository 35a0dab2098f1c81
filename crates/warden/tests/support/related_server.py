"""A 2025-era Streamable HTTP server on the official Python SDK 1.x
(`mcp==1.30.0`, `FastMCP`) that sends everything it asks or tells during a
call on that call's own answer stream (`related_request_id`): sampling,
elicitation, roots, log messages and progress. The tenancy tests share it
between clients of one Warden.

    related_server.py PORT      (Streamable HTTP at /mcp)
"""

import sys

import anyio
from mcp import types
from mcp.server.fastmcp import Context, FastMCP
from mcp.shared.message import ServerMessageMetadata
from pydantic import BaseModel

server = FastMCP("related")


class Name(BaseModel):
    name: str


@server.tool()
async def sample(prompt: str, ctx: Context) -> str:
    """Asks the client's model, on this call's stream."""
    result = await ctx.session.create_message(
        messages=[types.SamplingMessage(role="user", content=types.TextContent(type="text", text=prompt))],
        max_tokens=20,
        related_request_id=ctx.request_id,
    )
    return f"sampled: {result.content.text}"


@server.tool()
async def elicit(message: str, ctx: Context) -> str:
    """Asks the user for a name, on this call's stream."""
    answer = await ctx.elicit(message, Name)
    return f"elicited: {answer.action} {answer.data.name if answer.data else ''}"


@server.tool()
async def roots(ctx: Context) -> str:
    """Lists the client's roots, on this call's stream."""
    result = await ctx.session.send_request(
        types.ServerRequest(types.ListRootsRequest(method="roots/list")),
        types.ListRootsResult,
        metadata=ServerMessageMetadata(related_request_id=ctx.request_id),
    )
    return ",".join(str(root.uri) for root in result.roots)


@server.tool()
async def log(message: str, ctx: Context, level: str = "info") -> str:
    """Sends a log message at `level` on this call's stream."""
    await ctx.session.send_log_message(level, message, related_request_id=ctx.request_id)
    return "logged"


levels = []


@server._mcp_server.set_logging_level()
async def set_level(level: types.LoggingLevel) -> None:
    """Keeps the level set with logging/setLevel (declares `logging`)."""
    levels.append(level)


@server.tool()
async def level() -> str:
    """The level last set with logging/setLevel."""
    return levels[-1] if levels else "none"


@server.tool()
async def progress(steps: int, ctx: Context) -> str:
    """Reports a progress notification per step."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps)
    return f"done {steps}"


@server.tool()
async def slow(ms: int) -> str:
    """Sleeps."""
    await anyio.sleep(ms / 1000)
    return "slept"


if __name__ == "__main__":
    server.settings.host = "127.0.0.1"
    server.settings.port = int(sys.argv[1])
    server.run("streamable-http")
