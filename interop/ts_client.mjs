// A real MCP client (the official TypeScript SDKs) that drives one server
// through Warden and prints one JSON line per check; exits 1 on a failure.
//
//   node ts_client.mjs [--no-list-changes] [--everything] MODE (--url URL | --stdio CMD ARG...)
//
// MODE: `auto` or `2026-07-28` (@modelcontextprotocol/client 2.4.0, which
// probes server/discover or pins the revision), or `sdk1` (the 1.x SDK,
// @modelcontextprotocol/sdk 1.32.2: 2025-11-25 only). The server is the
// repository's fixture behind Warden (echo, elicit, sample, roots, progress).
import { randomUUID } from "node:crypto";

const given = process.argv.slice(2);
// server-everything names its tools its own way, and adds none on request.
const everything = given.includes("--everything");
// A server that cannot change its tools on request is not asked to.
const notifies = !given.includes("--no-list-changes") && !everything;
const [mode, how, ...rest] = given.filter((arg) => arg !== "--no-list-changes" && arg !== "--everything");
// What each check calls, on the repository's fixture (and the SDK servers in
// interop/, which copy it) and on @modelcontextprotocol/server-everything.
const SURFACES = {
  fixture: {
    echo: ["echo", { text: "hello" }],
    progress: ["progress", { steps: 2, delay_ms: 20 }],
    elicit: ["elicit", { message: "Your name?" }],
    sample: ["sample", { prompt: "2+2?" }],
    roots: ["roots", {}],
  },
  everything: {
    echo: ["echo", { message: "hello" }],
    progress: ["trigger-long-running-operation", { duration: 0.2, steps: 2 }],
    elicit: ["trigger-elicitation-request", {}],
    sample: ["trigger-sampling-request", { prompt: "2+2?", maxTokens: 20 }],
    roots: ["get-roots-list", {}],
  },
};
const surface = SURFACES[everything ? "everything" : "fixture"];
const call = (key) => ({ name: surface[key][0], arguments: surface[key][1] });
let failed = false;
const check = (name, ok, detail = "") => {
  failed ||= !ok;
  console.log(JSON.stringify({ check: name, ok: Boolean(ok), detail: String(JSON.stringify(detail) ?? "").slice(0, 300) }));
};
const textOf = (result) => (result.content ?? []).filter((block) => block.type === "text").map((block) => block.text).join("");

let client;
if (mode === "sdk1") {
  const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
  const types = await import("@modelcontextprotocol/sdk/types.js");
  client = new Client({ name: "warden-interop-sdk1", version: "1" }, { capabilities: { elicitation: {}, sampling: {}, roots: {} } });
  client.setRequestHandler(types.ElicitRequestSchema, async () => ({ action: "accept", content: { name: "Ada" } }));
  client.setRequestHandler(types.CreateMessageRequestSchema, async () => ({ role: "assistant", content: { type: "text", text: "four" }, model: "scripted" }));
  client.setRequestHandler(types.ListRootsRequestSchema, async () => ({ roots: [{ uri: "file:///work", name: "work" }] }));
  if (how === "--url") {
    const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
    await client.connect(new StreamableHTTPClientTransport(new URL(rest[0])));
  } else {
    const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
    await client.connect(new StdioClientTransport({ command: rest[0], args: rest.slice(1), stderr: "ignore" }));
  }
} else {
  const sdk = await import("@modelcontextprotocol/client");
  const negotiation = mode === "auto" ? { mode: "auto" } : { mode: { pin: mode } };
  client = new sdk.Client(
    { name: "warden-interop-client2", version: "1" },
    { capabilities: { elicitation: {}, sampling: {}, roots: {} }, versionNegotiation: negotiation },
  );
  client.setRequestHandler("elicitation/create", async () => ({ action: "accept", content: { name: "Ada" } }));
  client.setRequestHandler("sampling/createMessage", async () => ({ role: "assistant", content: { type: "text", text: "four" }, model: "scripted" }));
  client.setRequestHandler("roots/list", async () => ({ roots: [{ uri: "file:///work", name: "work" }] }));
  if (how === "--url") {
    await client.connect(new sdk.StreamableHTTPClientTransport(new URL(rest[0])));
  } else {
    const { StdioClientTransport } = await import("@modelcontextprotocol/client/stdio");
    await client.connect(new StdioClientTransport({ command: rest[0], args: rest.slice(1), stderr: "ignore" }));
  }
  check("era", true, client.getNegotiatedProtocolVersion());
  check("era-is-modern", client.getNegotiatedProtocolVersion() === "2026-07-28", client.getNegotiatedProtocolVersion());
}

const { tools } = await client.listTools();
check("tools/list", tools.some((tool) => tool.name === "echo"), tools.map((tool) => tool.name));
check("tools/call", textOf(await client.callTool(call("echo"))).includes("hello"));
const progress = [];
const onprogress = (p) => progress.push(p.progress);
const progressCall = call("progress");
// The 1.x SDK takes a result schema before the options; 2.x does not.
const done = mode === "sdk1" ? await client.callTool(progressCall, undefined, { onprogress }) : await client.callTool(progressCall, { onprogress });
// The TypeScript SDKs handle notifications a microtask later than responses:
// progress read in the same chunk as the answer finds its handler gone and is
// dropped (direct to a server too), so only the answer is checked here; the
// Python client checks every progress notification.
check("progress", !done.isError, [textOf(done), progress]);
const elicited = textOf(await client.callTool(call("elicit")));
check("elicitation", elicited.includes("Ada"), elicited);
const sampled = textOf(await client.callTool(call("sample")));
check("sampling", sampled.includes("four"), sampled);
const rooted = textOf(await client.callTool(call("roots")));
check("roots", rooted.includes("file:///work"), rooted);
const { prompts } = await client.listPrompts();
check("prompts/list", prompts.length > 0, prompts.map((prompt) => prompt.name));
const { resources } = await client.listResources();
const read = await client.readResource({ uri: resources[0].uri });
check("resources/read", read.contents.length > 0, read.contents[0]);
if (notifies && mode !== "sdk1" && client.getNegotiatedProtocolVersion() === "2026-07-28") {
  const fresh = `fresh_${randomUUID().slice(0, 8)}`;
  const changed = new Promise((resolve) => client.setNotificationHandler("notifications/tools/list_changed", () => resolve(true)));
  const subscription = await client.listen({ toolsListChanged: true });
  await client.callTool({ name: "add_tool", arguments: { name: fresh } });
  const seen = await Promise.race([changed, new Promise((resolve) => setTimeout(() => resolve(false), 10000))]);
  check("listen", seen === true);
  await subscription.close?.();
}
await client.close();
process.exit(failed ? 1 : 0);
