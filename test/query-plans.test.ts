/**
 * Query plans of every list filter and sort the API offers (test/query-catalogue.ts),
 * through D1 itself: no list query scans a table of all companies, and the hot
 * ones (default pages, the consoles' filters, a route's record) page along an
 * index instead of sorting the company's rows. `npm run bench:queries` prints the plans.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createDb } from "../src/core/db/client";
import { type PlanRow, TENANT_TABLES, catalogue, formatPlan, planProblems } from "./query-catalogue";

const db = createDb(env.DB);

async function explain(query: { sql: string; params: unknown[] }): Promise<PlanRow[]> {
  const { results } = await env.DB.prepare(`EXPLAIN QUERY PLAN ${query.sql}`)
    .bind(...query.params)
    .all<PlanRow>();
  return results;
}


describe("query plans", () => {
  it("knows the tenant tables, and the check flags a full scan and a sort of one", async () => {
    const tables = TENANT_TABLES;
    expect([...tables]).toEqual(expect.arrayContaining(["deliveries", "routes", "users", "addresses", "driver_tracking"]));
    // The checker itself: a query without the tenant scope scans every company's deliveries; ordering by a free field sorts.
    const scan = await explain({ sql: "select * from deliveries where notes = ? order by id", params: ["x"] });
    expect(planProblems(scan, tables, { hot: false, kind: "filtered" })).toEqual([expect.stringMatching(/^full scan: SCAN deliveries/)]);
    const sort = await explain({ sql: "select * from deliveries where company_id = ? order by notes limit 10", params: [1] });
    expect(planProblems(sort, tables, { hot: true, kind: "page" })).toEqual([expect.stringMatching(/^sort: /)]);
    expect(planProblems(sort, tables, { hot: false, kind: "page" })).toEqual([]);
    // Filtered but walking the company's rows in id order (what `+id` in list.ts avoids).
    const walk = await explain({ sql: "select * from deliveries where company_id = ? and route_id = ? order by id limit 10", params: [1, 2] });
    expect(planProblems(walk, tables, { hot: true, kind: "filtered" })).toEqual([expect.stringMatching(/^reads every row of the company: SEARCH deliveries USING INDEX deliveries_company /)]);
  });

  it("no list filter or sort scans a table of all companies, and no hot read reads or sorts every row of the company", async () => {
    const tables = TENANT_TABLES;
    const queries = catalogue(db, 1);
    expect(queries.length).toBeGreaterThan(200);
    const problems: string[] = [];
    for (const query of queries) {
      const plan = await explain(query);
      for (const problem of planProblems(plan, tables, query)) problems.push(`${query.label}: ${problem}\n${formatPlan(plan)}`);
    }
    expect(problems).toEqual([]);
  });
});
