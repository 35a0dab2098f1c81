// An MCP server built on the official TypeScript SDK
// (@modelcontextprotocol/server 2.4.0 + @modelcontextprotocol/node 2.1.2)
// with `createMcpHandler`: 2026-07-28 only (`{ legacy: 'reject' }`: a
// 2025-era client, one that sends initialize, is refused), or with `dual`,
// the SDK's default dual-era endpoint (2025 requests served statelessly).
// Its tools ask through `input_required` results (elicit, sample, roots),
// as a modern server must; a prompt with a completion, a resource, and
// slow/last_slow to see a cancellation arrive.
//
//   node ts_server.mjs PORT [dual]
//   node ts_server.mjs stdio          (dual-era, per connection: serveStdio)
//   node ts_server.mjs stdio modern   (serveStdio(…, {legacy: 'reject'}): 2026-07-28 only)
import { createServer } from "node:http";
import { toNodeHandler } from "@modelcontextprotocol/node";
import { McpServer, acceptedContent, completable, createMcpHandler, inputRequired } from "@modelcontextprotocol/server";
import * as z from "zod/v4";

const stdio = process.argv[2] === "stdio";
const port = Number(process.argv[2]);
// What became of the last `slow` call (the HTTP handler builds a server per request).
const slowState = { last: "none" };
const factory = () => {
  const server = new McpServer({ name: "ts-modern-only", version: "1.0.0" });
  server.registerTool("echo", { inputSchema: z.object({ text: z.string() }) }, async ({ text }) => ({
    content: [{ type: "text", text }],
  }));
  server.registerTool(
    "progress",
    { inputSchema: z.object({ steps: z.number(), delay_ms: z.number() }) },
    async ({ steps }, ctx) => {
      for (let step = 1; step <= steps; step++) {
        await ctx.mcpReq.notify?.({ method: "notifications/progress", params: { progressToken: ctx.mcpReq._meta?.progressToken, progress: step, total: steps } });
      }
      return { content: [{ type: "text", text: `done ${steps}` }] };
    },
  );
  const nameSchema = z.object({ name: z.string() });
  server.registerTool("elicit", { inputSchema: z.object({ message: z.string() }) }, async ({ message }, ctx) => {
    const answer = acceptedContent(ctx.mcpReq.inputResponses, "name", nameSchema);
    if (!answer) {
      return inputRequired({ inputRequests: { name: inputRequired.elicit({ message, requestedSchema: nameSchema }) } });
    }
    return { content: [{ type: "text", text: `elicited: accept ${JSON.stringify(answer)}` }] };
  });
  server.registerTool("sample", { inputSchema: z.object({ prompt: z.string() }) }, async ({ prompt }, ctx) => {
    const answer = ctx.mcpReq.inputResponses?.model;
    if (!answer) {
      return inputRequired({
        inputRequests: {
          model: inputRequired.createMessage({ messages: [{ role: "user", content: { type: "text", text: prompt } }], maxTokens: 20 }),
        },
      });
    }
    return { content: [{ type: "text", text: `sampled: ${answer.content?.text}` }] };
  });
  server.registerTool("roots", { inputSchema: z.object({}) }, async (_args, ctx) => {
    const answer = ctx.mcpReq.inputResponses?.roots;
    if (!answer) {
      return inputRequired({ inputRequests: { roots: inputRequired.listRoots() } });
    }
    return { content: [{ type: "text", text: JSON.stringify(answer) }] };
  });
  // Sleeps until done or cancelled (a closed stream on HTTP, notifications/cancelled on stdio).
  server.registerTool("slow", { inputSchema: z.object({ ms: z.number() }) }, async ({ ms }, ctx) => {
    slowState.last = "running";
    const signal = ctx.mcpReq.signal;
    const outcome = await new Promise((resolve) => {
      const timer = setTimeout(() => resolve("finished"), ms);
      signal?.addEventListener("abort", () => {
        clearTimeout(timer);
        resolve("cancelled");
      });
    });
    slowState.last = outcome;
    return { content: [{ type: "text", text: outcome === "finished" ? "slept" : "cancelled" }] };
  });
  server.registerTool("last_slow", { inputSchema: z.object({}) }, async () => ({
    content: [{ type: "text", text: slowState.last }],
  }));
  const names = ["alice", "bob"];
  server.registerPrompt(
    "greeting",
    { description: "A greeting.", argsSchema: z.object({ name: completable(z.string(), (value) => names.filter((name) => name.startsWith(value))) }) },
    async ({ name }) => ({ messages: [{ role: "user", content: { type: "text", text: `Hello, ${name}!` } }] }),
  );
  server.registerResource("readme", "fixture://readme", { mimeType: "text/plain" }, async (uri) => ({
    contents: [{ uri: uri.href, mimeType: "text/plain", text: "TypeScript readme" }],
  }));
  return server;
};
if (stdio) {
  const { serveStdio } = await import("@modelcontextprotocol/server/stdio");
  serveStdio(factory, process.argv[3] === "modern" ? { legacy: "reject" } : {});
} else {
  const dual = process.argv[3] === "dual";
  const handler = toNodeHandler(createMcpHandler(factory, dual ? {} : { legacy: "reject" }));
  createServer((req, res) => handler(req, res)).listen(port, "127.0.0.1", () => console.log(`listening on ${port}`));
}
