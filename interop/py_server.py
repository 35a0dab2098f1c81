"""A dual-era MCP server built on the official Python SDK (`mcp==2.3.0`,
`MCPServer`), with the surface `py_client.py` drives: echo, progress,
elicit, sample, roots (through the SDK's `Resolve`, which asks in whichever
era the connection speaks: a standalone request in 2025-11-25, an
`input_required` result in 2026-07-28), a prompt with a completion, a
resource, and `slow`/`last_slow` to see a cancellation arrive.

    py_server.py stdio
    py_server.py http PORT
"""

import sys

import anyio
from typing import Annotated

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.resolve import Elicit, ListRoots, Resolve, Sample
from mcp_types import Completion, CreateMessageResult, ListRootsResult, SamplingMessage, TextContent
from pydantic import BaseModel

server = MCPServer("py-dual-era")


class Name(BaseModel):
    name: str


def ask_name(message: str):
    return Elicit(message, Name)


def ask_model(prompt: str):
    return Sample([SamplingMessage(role="user", content=TextContent(type="text", text=prompt))], max_tokens=20)


def ask_roots():
    return ListRoots()


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
def elicit(message: str, answer: Annotated[Name, Resolve(ask_name)]) -> str:
    """Asks the user for a name."""
    return f"elicited: accept {answer.model_dump_json()}"


@server.tool()
def sample(prompt: str, answer: Annotated[CreateMessageResult, Resolve(ask_model)]) -> str:
    """Asks the client's model."""
    return f"sampled: {answer.content.text}"


@server.tool()
def roots(answer: Annotated[ListRootsResult, Resolve(ask_roots)]) -> str:
    """Lists the client's roots."""
    return answer.model_dump_json(exclude_none=True)


added = set()


@server.tool()
async def add_tool(name: str, ctx: Context) -> str:
    """Adds an echo-like tool."""
    if name in added:
        raise ValueError(f"a tool named {name!r} already exists")
    added.add(name)
    server.add_tool(lambda text="": text, name=name, description="Echoes, like echo.")
    await ctx.notify_tools_changed()
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
    return Completion(values=[name for name in ("alice", "bob") if name.startswith(argument.value)])


@server.prompt()
def greeting(name: str = "world") -> str:
    """A greeting."""
    return f"Hello, {name}!"


@server.resource("fixture://readme", mime_type="text/plain")
def readme() -> str:
    """A readme."""
    return "Python readme"


if __name__ == "__main__":
    if sys.argv[1] == "stdio":
        server.run("stdio")
    else:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
