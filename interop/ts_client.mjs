// A real MCP client (the official TypeScript SDKs) that drives one server
// through Warden and prints one JSON line per check; exits 1 on a failure.
//
//   node ts_client.mjs [--no-list-changes] [--everything] MODE (--url URL | --stdio CMD ARG...)
//
// MODE: `auto`, `2026-07-28` or `legacy` (@modelcontextprotocol/client
// 2.4.0, which probes server/discover, pins the revision, or only
// initializes), or `sdk1` (the 1.x SDK, @modelcontextprotocol/sdk 1.32.2:
// 2025-11-25 only). The server is the repository's fixture or one of the SDK
// servers here, directly or behind Warden (echo, elicit, sample, roots,
// progress, slow, last_slow; the greeting prompt and its completion), or
// server-everything (`--everything`). Cancellation: a `slow` call (or
// server-everything's long-running operation) is aborted after 0.5 s; it
// must end at once, the session must still answer, and where the server has
// `last_slow` it must say the call was cancelled.
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
    slow: ["slow", { ms: 30000 }],
  },
  everything: {
    echo: ["echo", { message: "hello" }],
    progress: ["trigger-long-running-operation", { duration: 0.2, steps: 2 }],
    elicit: ["trigger-elicitation-request", {}],
    sample: ["trigger-sampling-request", { prompt: "2+2?", maxTokens: 20 }],
    roots: ["get-roots-list", {}],
    slow: ["trigger-long-running-operation", { duration: 30, steps: 5 }],
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
  const negotiation = mode === "auto" || mode === "legacy" ? { mode } : { mode: { pin: mode } };
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
  if (mode !== "legacy") {
    check("era-is-modern", client.getNegotiatedProtocolVersion() === "2026-07-28", client.getNegotiatedProtocolVersion());
  }
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
if (!everything) {
  const prompt = await client.getPrompt({ name: "greeting", arguments: { name: "Ada" } });
  check("prompts/get", JSON.stringify(prompt.messages).includes("Ada"), prompt.messages);
  const completed = await client.complete({ ref: { type: "ref/prompt", name: "greeting" }, argument: { name: "name", value: "a" } });
  check("completion/complete", JSON.stringify(completed.completion.values) === '["alice"]', completed.completion.values);
}
const { resources } = await client.listResources();
const read = await client.readResource({ uri: resources[0].uri });
check("resources/read", read.contents.length > 0, read.contents[0]);
const names = tools.map((tool) => tool.name);
if (names.includes(surface.slow[0])) {
  const abort = new AbortController();
  const started = Date.now();
  setTimeout(() => abort.abort(), 500);
  const options = { signal: abort.signal, timeout: 60000 };
  const outcome = await (mode === "sdk1" ? client.callTool(call("slow"), undefined, options) : client.callTool(call("slow"), options)).then(
    (result) => `completed: ${textOf(result)}`,
    (error) => `aborted: ${error?.name ?? ""} ${error?.message ?? error}`,
  );
  const elapsed = (Date.now() - started) / 1000;
  const after = textOf(await client.callTool(call("echo")));
  check("cancel", outcome.startsWith("aborted") && elapsed < 5 && after.includes("hello"), `${outcome} after ${elapsed} s; then ${after}`);
  if (names.includes("last_slow")) {
    let state = "";
    for (let i = 0; i < 30; i++) {
      state = textOf(await client.callTool({ name: "last_slow", arguments: {} }));
      if (state !== "running") break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    check("cancel-reached-server", state === "cancelled", state);
  }
}
if (notifies && mode !== "sdk1" && mode !== "legacy" && client.getNegotiatedProtocolVersion() === "2026-07-28") {
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
