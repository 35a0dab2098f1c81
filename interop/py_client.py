"""A real MCP client (the official Python SDK, `mcp==2.3.0`) that drives one
server through Warden and prints one JSON line per check.

    py_client.py [--no-list-changes] [--everything] [--fixture] MODE (--url URL | --stdio CMD ARG...)

MODE is the SDK's `mode=`: `auto` (probe server/discover, fall back to
initialize), `2026-07-28` (modern, no probe) or `legacy` (initialize). The
server is the repository's fixture or one of the SDK servers here, directly
or behind Warden (tools echo, elicit, sample, roots, add_tool, progress,
slow, last_slow; the greeting prompt and its completion), or
server-everything (`--everything`). Cancellation: a `slow` call (or
server-everything's long-running operation) is cancelled client-side after
0.5 s; it must end at once, the session must still answer, and where the
server has `last_slow` it must say the call was cancelled. Exits 1 when a
check fails.
"""

import asyncio
import json
import sys
import time
import uuid

import anyio

import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters

failed = False


def check(name, ok, detail=""):
    global failed
    failed |= not ok
    print(json.dumps({"check": name, "ok": bool(ok), "detail": str(detail)[:300]}), flush=True)


def text_of(result):
    return "".join(block.text for block in result.content if getattr(block, "type", "") == "text")


# What each check calls, on the repository's fixture (and the SDK servers in
# interop/, which copy it) and on @modelcontextprotocol/server-everything.
SURFACES = {
    "fixture": {
        "echo": ("echo", {"text": "hello"}),
        "progress": ("progress", {"steps": 2, "delay_ms": 5}),
        "elicit": ("elicit", {"message": "Your name?"}),
        "sample": ("sample", {"prompt": "2+2?"}),
        "roots": ("roots", {}),
        "slow": ("slow", {"ms": 30000}),
    },
    "everything": {
        "echo": ("echo", {"message": "hello"}),
        "progress": ("trigger-long-running-operation", {"duration": 0.2, "steps": 2}),
        "elicit": ("trigger-elicitation-request", {}),
        "sample": ("trigger-sampling-request", {"prompt": "2+2?", "maxTokens": 20}),
        "roots": ("get-roots-list", {}),
        "slow": ("trigger-long-running-operation", {"duration": 30, "steps": 5}),
    },
}


async def on_elicit(context, params):
    return types.ElicitResult(action="accept", content={"name": "Ada"})


async def on_sample(context, params):
    return types.CreateMessageResult(
        role="assistant", content=types.TextContent(type="text", text="four"), model="scripted", stop_reason="endTurn"
    )


async def on_roots(context):
    return types.ListRootsResult(roots=[types.Root(uri="file:///work", name="work")])


async def main():
    args = sys.argv[1:]
    # A 2025-era session of the SDK's own server announces no list changes.
    notifies = "--no-list-changes" not in args
    # server-everything names its tools its own way, and adds none on request.
    everything = "--everything" in args
    notifies = notifies and not everything
    # The repository's fixture also completes and renders its prompt.
    fixture = "--fixture" in args
    args = [arg for arg in args if arg not in ("--no-list-changes", "--everything", "--fixture")]
    call = SURFACES["everything" if everything else "fixture"]
    mode = args[0]
    if args[1] == "--url":
        server = args[2]
    else:
        server = StdioServerParameters(command=args[2], args=args[3:])
    async with Client(
        server,
        mode=mode,
        elicitation_callback=on_elicit,
        sampling_callback=on_sample,
        list_roots_callback=on_roots,
        # Above the 45 s the matrix lets a first list wait for a slow start.
        read_timeout_seconds=90,
    ) as client:
        check("era", True, client.protocol_version)
        if mode != "legacy":
            check("era-is-modern", client.protocol_version == "2026-07-28", client.protocol_version)
        tools = await client.list_tools()
        names = [tool.name for tool in tools.tools]
        check("tools/list", "echo" in names, names)
        name, arguments = call["echo"]
        echoed = await client.call_tool(name, arguments)
        check("tools/call", "hello" in text_of(echoed), text_of(echoed))
        progress = []

        async def on_progress(value, total, message):
            progress.append(value)

        name, arguments = call["progress"]
        done = await client.call_tool(name, arguments, progress_callback=on_progress)
        # The SDK runs each progress callback in a task of its own
        # (`JSONRPCDispatcher._spawn`), so `call_tool` can return before the
        # last callback ran, on a busy machine: wait for them (Warden's own
        # order on the wire is checked by the Rust tests).
        with anyio.move_on_after(10):
            while len(progress) < 2:
                await anyio.sleep(0.01)
        check("progress", not done.is_error and len(progress) == 2, (text_of(done), progress))
        name, arguments = call["elicit"]
        elicited = await client.call_tool(name, arguments)
        check("elicitation", "Ada" in text_of(elicited), text_of(elicited))
        name, arguments = call["sample"]
        sampled = await client.call_tool(name, arguments)
        check("sampling", "four" in text_of(sampled), text_of(sampled))
        name, arguments = call["roots"]
        rooted = await client.call_tool(name, arguments)
        check("roots", "file:///work" in text_of(rooted), text_of(rooted))
        prompts = await client.list_prompts()
        check("prompts/list", len(prompts.prompts) > 0, [p.name for p in prompts.prompts])
        if not everything:
            prompt = await client.get_prompt("greeting", {"name": "Ada"})
            check("prompts/get", "Ada" in str(prompt.messages), prompt.messages)
            completed = await client.complete(
                types.PromptReference(type="ref/prompt", name="greeting"), {"name": "name", "value": "a"}
            )
            check("completion/complete", completed.completion.values == ["alice"], completed.completion.values)
        resources = await client.list_resources()
        check("resources/list", len(resources.resources) > 0, [str(r.uri) for r in resources.resources])
        read = await client.read_resource(resources.resources[0].uri)
        check("resources/read", len(read.contents) > 0, read.contents[0])
        name, arguments = call["slow"]
        if name in names:
            started = time.monotonic()
            with anyio.move_on_after(0.5) as scope:
                await client.call_tool(name, arguments)
            elapsed = time.monotonic() - started
            echoed = await client.call_tool(*call["echo"])
            check(
                "cancel",
                scope.cancelled_caught and elapsed < 5 and "hello" in text_of(echoed),
                f"cancelled after {elapsed:.1f} s; then {text_of(echoed)!r}",
            )
            if "last_slow" in names:
                state = ""
                for _ in range(30):
                    state = text_of(await client.call_tool("last_slow", {}))
                    if state != "running":
                        break
                    await asyncio.sleep(0.1)
                check("cancel-reached-server", state == "cancelled", state)
        if client.protocol_version == "2026-07-28" and notifies:
            fresh = f"fresh_{uuid.uuid4().hex[:8]}"
            async with client.listen(tools_list_changed=True) as subscription:
                await client.call_tool("add_tool", {"name": fresh})
                event = await asyncio.wait_for(subscription.__anext__(), 10)
                check("listen", event is not None, event)
            tools = await client.list_tools()
            check("listen-refetch", fresh in [tool.name for tool in tools.tools])
    sys.exit(1 if failed else 0)


asyncio.run(main())
