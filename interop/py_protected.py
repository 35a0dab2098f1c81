"""A real MCP client (the official Python SDK, `mcp==2.3.0`) asks Warden, with
no policy written, for a resource, a prompt and a completion that name a
protected file, then for ones that do not, and prints one JSON line per check.

    py_protected.py MODE PROTECTED_PATH (--url URL | --stdio CMD ARG...)

MODE is the SDK's `mode=` (`legacy` or `2026-07-28`). The server behind
Warden is the repository's fixture (the `greeting` prompt, the
`fixture://readme` resource). Exits 1 when a check fails.
"""

import asyncio
import json
import sys

from mcp import Client, MCPError
from mcp.client.stdio import StdioServerParameters
from mcp.types import PromptReference

failed = False


def check(name, ok, detail=""):
    global failed
    failed |= not ok
    print(json.dumps({"check": name, "ok": bool(ok), "detail": str(detail)[:300]}), flush=True)


async def refusal(request):
    """The error code and message `request` was refused with, or None."""
    try:
        await request
    except MCPError as error:
        return error.code, error.message
    return None


async def main():
    mode, protected, transport, *rest = sys.argv[1:]
    server = rest[0] if transport == "--url" else StdioServerParameters(command=rest[0], args=rest[1:])
    async with Client(server, mode=mode, read_timeout_seconds=60) as client:
        refused = await refusal(client.read_resource("file://" + protected))
        check("resource-refused", refused and refused[0] == -32011 and "protected-path" in refused[1], refused)
        refused = await refusal(client.get_prompt("greeting", {"name": protected}))
        check("prompt-refused", refused and refused[0] == -32011 and "protected-path" in refused[1], refused)
        greeting = PromptReference(name="greeting")
        refused = await refusal(client.complete(greeting, {"name": "name", "value": protected}))
        check("completion-refused", refused and refused[0] == -32011 and "protected-path" in refused[1], refused)
        completed = await client.complete(greeting, {"name": "name", "value": "a"})
        check("completion-got", completed.completion.values == ["alice"], completed.completion)
        read = await client.read_resource("fixture://readme")
        check("resource-read", "Fixture readme" in str(read.contents), read.contents)
        prompt = await client.get_prompt("greeting", {"name": "Ada"})
        check("prompt-got", "Ada" in str(prompt.messages), prompt.messages)
    sys.exit(1 if failed else 0)


asyncio.run(main())
