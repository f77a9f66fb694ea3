/**
 * Prints the `EXPLAIN QUERY PLAN` of every list filter and sort the API offers
 * (test/query-catalogue.ts) as local D1 (workerd's SQLite, migrations applied
 * to a temporary state folder) plans them, and marks a full scan of a table of
 * all companies and, on a hot read, a sort of the company's rows. The same
 * check is asserted by test/query-plans.test.ts.
 *
 *   npm run bench:queries [-- --only delivery] [-- --problems]
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { getPlatformProxy } from "wrangler";
import { createDb } from "../src/worker/db/client";
import { type PlanRow, TENANT_TABLES, catalogue, formatPlan, planProblems } from "../test/query-catalogue";

const { values } = parseArgs({ options: { only: { type: "string" }, problems: { type: "boolean", default: false } } });

const state = mkdtempSync(join(tmpdir(), "dispatch-plans-"));
process.on("exit", () => rmSync(state, { recursive: true, force: true }));
// The migrations as production has them (reference data included: its tables are planned too).
const migrate = spawnSync("npx", ["wrangler", "d1", "migrations", "apply", "DB", "--local", "--persist-to", state], { stdio: ["ignore", "ignore", "inherit"], env: { ...process.env, CI: "true" } });
if (migrate.status !== 0) throw new Error("migrations failed");

const proxy = await getPlatformProxy<{ DB: D1Database }>({ configPath: resolve("wrangler.toml"), persist: { path: join(state, "v3") } });
const d1 = proxy.env.DB;
const queries = catalogue(createDb(d1), 1).filter((q) => !values.only || q.label.includes(values.only));
let flagged = 0;
for (const query of queries) {
  const { results: plan } = await d1.prepare(`EXPLAIN QUERY PLAN ${query.sql}`).bind(...query.params).all<PlanRow>();
  const problems = planProblems(plan, TENANT_TABLES, query);
  if (problems.length) flagged++;
  if (values.problems && !problems.length) continue;
  console.log(`${query.hot ? "[hot] " : ""}${query.label}${problems.length ? `   <-- ${problems.join("; ")}` : ""}`);
  console.log(formatPlan(plan));
}
console.log(`\n${queries.length} statements, ${flagged} with a full scan of a tenant table or (hot) a sort of the company's rows`);
await proxy.dispose();
