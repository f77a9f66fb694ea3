/**
 * Prints the `EXPLAIN QUERY PLAN` of every list filter and sort the API offers
 * (test/query-catalogue.ts) as local D1 (workerd's SQLite, migrations applied
 * to a temporary state folder) plans them, and marks a full scan of a table of
 * all companies and, on a hot read, a sort of the company's rows. The same
 * check is asserted by test/query-plans.test.ts.
 *
 *   npm run bench:queries [-- --only delivery] [-- --problems] [-- --rows [--old-indexes]]
 *
 * `--rows` seeds two companies like `bench:load` does (each: 50 drivers with
 * 20 positions, 500 addresses, 100 routes of 40 deliveries, 1,000 unrouted:
 * 5,000 deliveries) and prints, for each hot statement of company 1, the rows
 * SQLite read and its time as D1 reports them (`meta.rows_read`,
 * `meta.duration`): a figure the machine's load does not move.
 * `--old-indexes` first drops the indexes of the list_order_indexes migration
 * (and restores the (company_id, status) index it replaced), to compare.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { getPlatformProxy } from "wrangler";
import { createDb } from "../src/core/db/client";
import { type PlanRow, TENANT_TABLES, catalogue, formatPlan, planProblems } from "../test/query-catalogue";

const { values } = parseArgs({
  options: {
    only: { type: "string" },
    problems: { type: "boolean", default: false },
    rows: { type: "boolean", default: false },
    "old-indexes": { type: "boolean", default: false },
  },
});

const state = mkdtempSync(join(tmpdir(), "dispatch-plans-"));
process.on("exit", () => rmSync(state, { recursive: true, force: true }));
// The migrations as production has them (reference data included: its tables are planned too).
const migrate = spawnSync("npx", ["wrangler", "d1", "migrations", "apply", "DB", "--local", "--persist-to", state], { stdio: ["ignore", "ignore", "inherit"], env: { ...process.env, CI: "true" } });
if (migrate.status !== 0) throw new Error("migrations failed");

const proxy = await getPlatformProxy<{ DB: D1Database }>({ configPath: resolve("wrangler.toml"), persist: { path: join(state, "v3") } });
const d1 = proxy.env.DB;
const queries = catalogue(createDb(d1), 1).filter((q) => !values.only || q.label.includes(values.only));

/** Two companies of bench:load's size; company 1's route 1 and driver 1 exist (the catalogue's hot filters). */
async function seed() {
  const n = (count: number) => `with recursive n(i) as (select 1 union all select i + 1 from n where i < ${count})`;
  for (const c of [1, 2]) {
    const first = (table: string) => `(select min(id) from ${table} where company_id = ${c})`;
    await d1.batch([
      d1.prepare(`insert into companies (id, slug, companyname) values (${c}, 'plan-${c}', 'Plan ${c}')`),
      d1.prepare(`${n(50)} insert into users (company_id, usertype, email) select ${c}, 'driver', 'd' || i || '@plan-${c}.example' from n`),
      d1.prepare(`${n(500)} insert into addresses (company_id, street, city, lng, lat) select ${c}, 'Street ' || i, 'Berlin', 13.3 + i * 0.0001, 52.5 + i * 0.0001 from n`),
      d1.prepare(
        `${n(100)} insert into routes (company_id, driver_id, status, distance, gross_duration, net_duration, routebase_address_id) select ${c}, ${first("users")} + (i - 1) % 50, 1, 20000, 21600, 14400, ${first("addresses")} from n`,
      ),
      d1.prepare(
        `${n(5000)} insert into deliveries (company_id, deliverylocation_id, supplierlocation_id, pdt_from, pdt_to, els, load, status, route_id, orderindex)
         select ${c}, ${first("addresses")} + i % 500, ${first("addresses")}, printf('2026-11-27T%02d:00:00Z', 6 + i % 10), printf('2026-11-27T%02d:00:00Z', 9 + i % 10), 3, 1,
           case when i <= 4000 then 1 else 0 end, case when i <= 4000 then ${first("routes")} + (i - 1) / 40 end, case when i <= 4000 then (i - 1) % 40 end from n`,
      ),
      d1.prepare(
        `${n(1000)} insert into driver_tracking (company_id, driver_id, timestamp, lng, lat) select ${c}, ${first("users")} + i % 50, printf('2026-11-27T08:%02d:%02dZ', i / 60 % 60, i % 60), 13.4, 52.5 from n`,
      ),
    ]);
  }
}

if (values.rows) {
  if (values["old-indexes"])
    await d1.batch(
      ["deliveries_company", "deliveries_company_status_pdt", "addresses_company", "tracking_company", "routes_company"]
        .map((index) => d1.prepare(`drop index ${index}`))
        .concat(d1.prepare("create index deliveries_company_status on deliveries (company_id, status)")),
    );
  await seed();
  console.log(`rows read and time per hot statement, company 1 of 2 (5,000 deliveries each)${values["old-indexes"] ? ", the indexes before list_order_indexes" : ""}`);
  let total = 0;
  for (const query of queries.filter((q) => q.hot)) {
    const { meta } = await d1.prepare(query.sql).bind(...query.params).all();
    total += meta.rows_read;
    console.log(`${String(meta.rows_read).padStart(7)} rows  ${meta.duration.toFixed(2).padStart(6)} ms  ${query.label}`);
  }
  console.log(`${total} rows read by ${queries.filter((q) => q.hot).length} hot statements`);
  await proxy.dispose();
  process.exit(0);
}
let flagged = 0;
for (const query of queries) {
  const { results: plan } = await d1.prepare(`EXPLAIN QUERY PLAN ${query.sql}`).bind(...query.params).all<PlanRow>();
  const problems = planProblems(plan, TENANT_TABLES, query);
  if (problems.length) flagged++;
  if (values.problems && !problems.length) continue;
  console.log(`${query.hot ? "[hot] " : ""}${query.label}${problems.length ? `   <-- ${problems.join("; ")}` : ""}`);
  console.log(formatPlan(plan));
}
console.log(`\n${queries.length} statements, ${flagged} with a full scan of a tenant table or (hot) a read or sort of every row of the company`);
await proxy.dispose();
