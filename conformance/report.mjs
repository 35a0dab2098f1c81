// Prints the failed and warning checks the conformance suite saved with
// `-o DIR` (one `server-<scenario>-<time>/checks.json` per scenario), with
// their details, so a failure can be fixed without rerunning the suite.
//
// usage: node report.mjs DIR
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const dir = process.argv[2];
if (!dir) {
  console.error("usage: node report.mjs DIR");
  process.exit(2);
}

let failed = 0;
for (const entry of readdirSync(dir).sort()) {
  const scenario = entry.replace(/^server-/, "").replace(/-\d{4}-\d\d-\d\dT.*$/, "");
  let checks;
  try {
    checks = JSON.parse(readFileSync(join(dir, entry, "checks.json"), "utf8"));
  } catch (err) {
    console.log(`  ${scenario}: no readable checks.json (${err.message})`);
    failed++;
    continue;
  }
  for (const check of checks) {
    if (check.status !== "FAILURE" && check.status !== "WARNING") continue;
    if (check.status === "FAILURE") failed++;
    console.log(`  ${check.status} ${scenario} / ${check.id}: ${check.errorMessage ?? check.description}`);
    if (check.details !== undefined) {
      const details = JSON.stringify(check.details);
      console.log(`    details: ${details.length > 2000 ? details.slice(0, 2000) + "..." : details}`);
    }
  }
}
process.exit(failed > 0 ? 1 : 0);
