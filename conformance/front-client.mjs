// A minimal 2026-07-28 client on Warden's stdio front, for the conformance
// suite's client scenarios that need a model-side client to act (answer an
// elicitation, call what the scenario lists). The suite's scenario server is
// Warden's one upstream; this script starts `warden serve` on it and does
// through Warden what the suite's own reference client
// (examples/clients/typescript/everything-client.ts) does directly. Plain
// JSON-RPC, no SDK: it runs on the suite's pinned Node 22.
//
//   node front-client.mjs WARDEN CONFIG
//   (MCP_CONFORMANCE_SCENARIO names the scenario; MCP_CONFORMANCE_CONTEXT is
//   its JSON context, e.g. the tool calls of http-custom-headers)
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";

const [warden, config] = process.argv.slice(2);
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? "";
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT || "{}");
const child = spawn(warden, ["serve", "--config", config, "--log-level", "warn"], { stdio: ["pipe", "pipe", "inherit"] });
const pending = new Map();
createInterface({ input: child.stdout }).on("line", (line) => {
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    return;
  }
  if (message.id !== undefined && pending.has(message.id) && !message.method) {
    pending.get(message.id)(message);
    pending.delete(message.id);
  }
});
let nextId = 1;
const meta = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": { elicitation: { form: {} }, sampling: {}, roots: {} },
  "io.modelcontextprotocol/clientInfo": { name: "warden-conformance-front", version: "1" },
};
const rpc = (method, params = {}) =>
  new Promise((resolve, reject) => {
    const id = nextId++;
    const timer = setTimeout(() => reject(new Error(`${method}: no answer in 20 s`)), 20000);
    pending.set(id, (message) => {
      clearTimeout(timer);
      resolve(message);
    });
    child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params: { ...params, _meta: meta } }) + "\n");
  });
const log = (...args) => console.error("front-client:", ...args);
// Answers each elicitation of an input_required result, as the reference client does.
const answer = (inputRequests) =>
  Object.fromEntries(
    Object.entries(inputRequests ?? {})
      .filter(([, request]) => request.method === "elicitation/create")
      .map(([key]) => [key, { action: "accept", content: { confirmed: true } }]),
  );

const tools = (await rpc("tools/list")).result?.tools ?? [];
log("tools:", tools.map((tool) => tool.name).join(" "));
switch (scenario) {
  case "http-standard-headers": {
    if (tools[0]) await rpc("tools/call", { name: tools[0].name, arguments: {} });
    const resources = (await rpc("resources/list")).result?.resources ?? [];
    if (resources[0]) await rpc("resources/read", { uri: resources[0].uri });
    const prompts = (await rpc("prompts/list")).result?.prompts ?? [];
    if (prompts[0]) await rpc("prompts/get", { name: prompts[0].name, arguments: {} });
    break;
  }
  case "http-custom-headers":
    for (const call of context.toolCalls ?? []) log(call.name, JSON.stringify((await rpc("tools/call", call)).error ?? "ok"));
    break;
  case "http-invalid-tool-headers":
    // A client calls what it was offered: Warden must offer only valid tools.
    for (const tool of tools) log(tool.name, JSON.stringify((await rpc("tools/call", { name: tool.name, arguments: {} })).error ?? "ok"));
    break;
  case "sep-2322-client-request-state": {
    const first = (await rpc("tools/call", { name: "test_mrtr_echo_state", arguments: {} })).result;
    if (first?.resultType === "input_required") {
      await rpc("tools/call", { name: "test_mrtr_unrelated", arguments: {} });
      const retry = { name: "test_mrtr_echo_state", arguments: {}, inputResponses: answer(first.inputRequests) };
      if (first.requestState !== undefined) retry.requestState = first.requestState;
      log("echo_state retry:", JSON.stringify(await rpc("tools/call", retry)).slice(0, 300));
    } else log("echo_state: no input_required:", JSON.stringify(first).slice(0, 300));
    const second = (await rpc("tools/call", { name: "test_mrtr_no_state", arguments: {} })).result;
    if (second?.resultType === "input_required") {
      const retry = { name: "test_mrtr_no_state", arguments: {}, inputResponses: answer(second.inputRequests) };
      if (second.requestState !== undefined) retry.requestState = second.requestState;
      log("no_state retry:", JSON.stringify(await rpc("tools/call", retry)).slice(0, 300));
    }
    await rpc("tools/call", { name: "test_mrtr_no_result_type", arguments: {} });
    break;
  }
  default:
    // json-schema-ref-no-deref and anything else: listing is the whole act.
    break;
}
child.stdin.end();
child.kill("SIGTERM");
process.exit(0);
