// A load client built on the official TypeScript SDK (@modelcontextprotocol/sdk),
// for the stdio comparisons a Node user would make: it spawns the command given
// after `--`, calls a tool CALLS times one at a time and then CALLS times with
// CONCURRENCY in flight, and prints one JSON line per phase.
//
//   node bench/ts-client.mjs --label L --calls 2000 --concurrency 16 --tool echo -- CMD ARGS...
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const argv = process.argv.slice(2);
const split = argv.indexOf("--");
if (split < 1 || split === argv.length - 1) {
  console.error("usage: ts-client.mjs [--label L] [--calls N] [--concurrency N] [--warmup N] [--tool NAME] -- CMD ARGS...");
  process.exit(2);
}
const options = Object.fromEntries(
  argv.slice(0, split).reduce((pairs, value, index, all) => (index % 2 ? pairs : [...pairs, [all[index].replace(/^--/, ""), all[index + 1]]]), []),
);
const [command, ...args] = argv.slice(split + 1);
const calls = Number(options.calls ?? 2000);
const concurrency = Number(options.concurrency ?? 16);
const warmup = Number(options.warmup ?? 200);
const wanted = options.tool ?? "echo";

const client = new Client({ name: "warden-ts-bench", version: "1" });
await client.connect(new StdioClientTransport({ command, args, stderr: "ignore" }));
// Servers behind a gateway may still be starting: list until the tool is there.
let tool;
for (let attempt = 0; attempt < 200 && !tool; attempt++) {
  const { tools } = await client.listTools();
  tool = tools.find((t) => t.name === wanted || t.name.endsWith(`__${wanted}`))?.name;
  if (!tool) await new Promise((resolve) => setTimeout(resolve, 50));
}
if (!tool) throw new Error(`no tool named ${wanted}`);
const call = () => client.callTool({ name: tool, arguments: { message: "hello", text: "hello" } });

async function phase(name, inFlight) {
  const latencies = [];
  let next = 0;
  const started = process.hrtime.bigint();
  const worker = async () => {
    while (next < calls) {
      next++;
      const t0 = process.hrtime.bigint();
      const result = await call();
      if (result.isError) throw new Error(`tool error: ${JSON.stringify(result)}`);
      latencies.push(Number(process.hrtime.bigint() - t0) / 1000);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  latencies.sort((a, b) => a - b);
  const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
  console.log(JSON.stringify({
    label: options.label ?? "", phase: name, calls: latencies.length, concurrency: inFlight,
    calls_per_sec: latencies.length / seconds, p50_us: at(0.5), p90_us: at(0.9), p99_us: at(0.99),
    max_us: latencies[latencies.length - 1], errors: 0,
  }));
}

for (let i = 0; i < warmup; i++) await call();
await phase("sequential", 1);
await phase("concurrent", concurrency);
await client.close();
