#!/usr/bin/env node
/**
 * How long a company is read-only while it moves to another shard (docs/operations/shards.md,
 * the runbook): a local `wrangler dev` (two shards, MOVE_GRACE_SECONDS 0, so only the work is
 * timed), one company on shard 0 with `--positions` driver positions (default 100,000) seeded by
 * SQL, then `POST /_operator/companies/<slug>/move` step after step to shard 1. Prints the time of
 * each phase, how long the company was read-only, the rows moved and the rows per second.
 *
 *   npm run bench:move [-- --positions 100000 --port 8798]
 */
import { parseArgs } from "node:util";
import { startService } from "./bench-lib.mjs";

const { values } = parseArgs({ options: { port: { type: "string", default: "8798" }, positions: { type: "string", default: "100000" } } });
const positions = Number(values.positions);
const service = await startService({ port: values.port, vars: { MOVE_GRACE_SECONDS: "0" } });
const { call, company, user, sql } = service;

try {
  const co = await company();
  const driver = await user(co.slug, "driver", `driver@${co.slug}.example`);
  // A driver's positions every 10 s, back from now (SQL: the API would take minutes to post them).
  for (let done = 0; done < positions; done += 50_000) {
    const n = Math.min(50_000, positions - done);
    sql(`with recursive n(i) as (select 1 union all select i + 1 from n where i < ${n})
      insert into driver_tracking (company_id, driver_id, timestamp, lng, lat)
      select ${co.id}, ${driver.id}, strftime('%Y-%m-%dT%H:%M:%SZ', 'now', '-' || ((${done} + i) * 10) || ' seconds'), 13.4 + (i % 1000) / 10000.0, 52.5 + (i % 700) / 10000.0 from n;`);
  }
  // The seed took long enough for the server to close the idle kept-alive socket: a GET (sent again once) renews it.
  await call("GET", "/health");
  const phases = new Map();
  const started = performance.now();
  let last = performance.now();
  let step;
  let steps = 0;
  let frozenAt;
  let thawedAt;
  do {
    const res = await call("POST", `/_operator/companies/${co.slug}/move`, { operator: true, body: { shard: 1 } });
    if (res.status !== 200) throw new Error(`move: ${res.status} ${JSON.stringify(res.body)}`);
    step = res.body;
    steps++;
    const now = performance.now();
    phases.set(step.phase, (phases.get(step.phase) ?? 0) + (now - last));
    last = now;
    // Read-only from the step that answers `freeze` until the one that answers `cleanup` (writes allowed again).
    if (step.phase === "freeze" && frozenAt === undefined) frozenAt = now;
    if (step.phase === "cleanup" && thawedAt === undefined) thawedAt = now;
  } while (!step.done);
  const seconds = (performance.now() - started) / 1000;
  const rows = step.verified.reduce((sum, t) => sum + t.rows, 0);
  console.log(`moved ${rows} rows (${positions} positions) in ${steps} steps, ${seconds.toFixed(1)} s: ${Math.round(rows / seconds)} rows/s`);
  console.log(`read-only for ${((thawedAt - frozenAt) / 1000).toFixed(1)} s (without the two grace periods of MOVE_GRACE_SECONDS)`);
  console.log("time per phase reached by a step (s):", Object.fromEntries([...phases].map(([p, ms]) => [p, +(ms / 1000).toFixed(1)])));
  const after = await call("GET", `/${co.slug}/api/drivertrace/${driver.id}`, { token: co.token });
  console.log(`GET /drivertrace after the move: ${after.status}`);
} finally {
  service.stop();
}
