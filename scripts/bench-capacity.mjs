#!/usr/bin/env node
/**
 * Capacity model, measured: writes rows of every table that grows into a local
 * `wrangler dev` (fresh D1), reads the bytes each table and its indexes take
 * from the local D1 sqlite file (`dbstat`), and prints bytes per row, rows per
 * day and the days until a 10 GB D1 database is full at 10, 100 and 1,000
 * active drivers, with and without retention. Prints figures; asserts nothing.
 *
 *   npm run bench:capacity [-- --positions 20000 --deliveries 600 --invitations 300 --webhook-deliveries 5000]
 *
 * Through the public API: positions (POST /drivertracking, with a webhook
 * wanting `driver.position`, so positions reach the event log too), deliveries
 * and routes (two routing runs: the second replaces the first plan's routes;
 * single deliveries by POST /delivery, each with an Idempotency-Key as an integration sends it), events (written by all of those), outbox rows (invitation emails, rendered and
 * sent). Webhook delivery logs are written by SQL in the shape the consumer
 * writes (a local webhook cannot be reached: webhook URLs must be public hosts).
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { parseArgs } from "node:util";
import { gzipSync } from "node:zlib";
import { sleep, startService } from "./bench-lib.mjs";

const { values } = parseArgs({
  options: {
    port: { type: "string", default: "8797" },
    positions: { type: "string", default: "20000" },
    deliveries: { type: "string", default: "600" },
    invitations: { type: "string", default: "300" },
    "webhook-deliveries": { type: "string", default: "5000" },
    "single-deliveries": { type: "string", default: "500" },
  },
});
const N = { positions: Number(values.positions), deliveries: Number(values.deliveries), invitations: Number(values.invitations), hooks: Number(values["webhook-deliveries"]), single: Number(values["single-deliveries"]) };

/**
 * The day of one active driver (the model's assumptions, not measurements):
 * a position every 10 s over a 9-hour shift, 100 stops, one route and one
 * replacement (a re-plan), two customer messages per stop, three events per
 * stop (created, planned, reported) and per route (planned, started,
 * finished), every event sent to one webhook endpoint (that does not want
 * `driver.position`: positions then stay out of the event log), three
 * idempotency keys per stop (the order's intake, the driver app's report and
 * its proof images).
 */
const DAY = { positions: (9 * 3600) / 10, stops: 100, routes: 2, messagesPerStop: 2, eventsPerStop: 3, eventsPerRoute: 3, webhookEndpoints: 1, idempotencyKeysPerStop: 3 };
/** Retention of src/core/services/retention.ts (days kept; positions: the default position_retention_days, and a shorter setting). Deliveries and routes are kept. */
const KEEP = { driver_tracking: 30, events: 7, outbox: 30, webhook_deliveries: 30, idempotency_keys: 1 };
const SHORT_POSITIONS = 7;
const LIMIT = 10 * 1024 ** 3;

const service = await startService({ port: values.port });
const { call, company, user, sql, state } = service;

/** The local D1 file of the bench company's shard: of the two shards (both freshly migrated alike), the one with the most companies. */
function database() {
  const dir = join(state, "v3", "d1", "miniflare-D1DatabaseObject");
  const files = readdirSync(dir).filter((f) => f.endsWith(".sqlite") && f !== "metadata.sqlite");
  const companies = (file) => {
    const db = new DatabaseSync(join(dir, file), { readOnly: true });
    try {
      return db.prepare("select count(*) as n from companies").get().n;
    } finally {
      db.close();
    }
  };
  const file = files.map((f) => ({ f, n: companies(f) })).sort((a, b) => b.n - a.n)[0].f;
  return new DatabaseSync(join(dir, file), { readOnly: true });
}

/** Bytes (pages of the table and of its indexes) and rows of each table. */
function measure() {
  const db = database();
  const bytes = {};
  for (const { tbl, size } of db.prepare("select m.tbl_name as tbl, sum(s.pgsize) as size from dbstat s join sqlite_master m on m.name = s.name group by m.tbl_name").all()) bytes[tbl] = size;
  const rows = {};
  for (const t of ["driver_tracking", "events", "deliveries", "routes", "addresses", "outbox", "webhook_deliveries", "idempotency_keys"]) rows[t] = db.prepare(`select count(*) as n from "${t}"`).get().n;
  db.close();
  return { bytes, rows };
}

async function routing(slug, token, n) {
  const started = await call("POST", `/${slug}/api/calcroute/optimized/timewindow?num_vehicles=${Math.ceil(n / 6)}&time_budget_seconds=2`, { token, body: { deliverydata: stops(n), vehcapacities: [8] } });
  if (started.status !== 202) throw new Error(`calcroute: ${started.status} ${JSON.stringify(started.body)}`);
  for (;;) {
    const final = (await call("GET", `/${slug}/api/process/status/${started.body.process_id}/final`, { token })).body;
    if (final.status === "failed") throw new Error(`routing failed: ${final.meta}`);
    if (final.status === "finished") return;
    await sleep(250);
  }
}

function stops(n) {
  let s = 7;
  const rnd = () => (s = (s * 16807) % 2147483647) / 2147483647;
  const day = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
  return Array.from({ length: n }, (_, i) => {
    const h = 6 + Math.floor(rnd() * 10);
    return { lat: 52.4 + rnd() * 0.25, lng: 13.15 + rnd() * 0.5, custom_id: `c-${i}`, contactlastname: `Kunde ${i}`, street: "Musterstraße", housenumber: String(i), postalcode: "10115", city: "Berlin", pdt_from: `${day}T${String(h).padStart(2, "0")}:00:00Z`, pdt_to: `${day}T${String(h + 3).padStart(2, "0")}:00:00Z`, els: 3, load: 1 };
  });
}

async function fill() {
  const { slug, id: companyId, token } = await company();
  const driver = await user(slug, "driver", `d@${slug}.example`);
  const hook = await call("POST", `/${slug}/api/webhook`, { token, body: { url: "https://hooks.example.com/dispatch", event_types: ["*"] } });
  if (hook.status !== 201) throw new Error(`webhook: ${hook.status} ${JSON.stringify(hook.body)}`);

  const t0 = Date.now() - N.positions * 10_000;
  for (let i = 0; i < N.positions; i += 500) {
    const batch = Array.from({ length: Math.min(500, N.positions - i) }, (_, k) => ({
      driver_id: driver.id,
      timestamp: new Date(t0 + (i + k) * 10_000).toISOString(),
      position: { type: "Point", coordinates: [13.4 + ((i + k) % 1000) * 1e-4, 52.5 + ((i + k) % 700) * 1e-4] },
    }));
    const res = await call("POST", `/${slug}/api/drivertracking`, { token: driver.token, body: batch });
    if (res.status >= 400) throw new Error(`drivertracking: ${res.status} ${JSON.stringify(res.body)}`);
  }

  await routing(slug, token, N.deliveries / 2);
  const address = (await call("POST", `/${slug}/api/address`, { token, body: { contactcompany: "Kunde", street: "Musterstraße", housenumber: "1", postalcode: "10115", city: "Berlin", lat: 52.53, lng: 13.38 } })).body.id;
  for (let i = 0; i < N.single; i++) {
    const res = await call("POST", `/${slug}/api/delivery`, { token, headers: { "Idempotency-Key": crypto.randomUUID() }, body: { deliverylocation_id: address, custom_id: `s-${i}`, els: 3, load: 1 } });
    if (res.status >= 400) throw new Error(`delivery: ${res.status} ${JSON.stringify(res.body)}`);
  }
  await routing(slug, token, N.deliveries / 2);

  for (let i = 0; i < N.invitations; i++) {
    const res = await call("POST", `/${slug}/api/adduser/watcher`, { token, body: { email: `watcher-${i}@${slug}.example`, firstname: "Wera", lastname: `Watcher ${i}` } });
    if (res.status >= 400) throw new Error(`adduser: ${res.status} ${JSON.stringify(res.body)}`);
  }

  // What deliverWebhook records for a successful attempt, one per event.
  sql(`with recursive n(i) as (select 1 union all select i + 1 from n where i < ${N.hooks})
    insert into webhook_deliveries (company_id, webhook_id, event_id, event_type, attempt, status_code, latency_ms, error, succeeded, created_at)
    select ${companyId}, ${hook.body.id}, 100000 + i, 'delivery.updated', 1, 200, 80 + i % 300, null, 1, strftime('%Y-%m-%dT%H:%M:%SZ', 'now') from n;`);
}

try {
  const before = measure();
  await fill();
  // Invitation emails are sent by the queue consumer (subject, text and HTML stored then): give it a moment.
  await sleep(3000);
  const after = measure();
  const perRow = {};
  const rows = {};
  for (const t of Object.keys(after.rows)) {
    rows[t] = after.rows[t] - before.rows[t];
    perRow[t] = rows[t] ? ((after.bytes[t] ?? 0) - (before.bytes[t] ?? 0)) / rows[t] : 0;
  }

  console.log("bytes per row, table and its indexes (local D1, dbstat pages):");
  for (const t of Object.keys(rows)) console.log(`  ${t.padEnd(20)} ${String(Math.round(perRow[t])).padStart(6)} B  (${rows[t]} rows written)`);

  /** Rows one active driver adds per day, per table. */
  const daily = {
    driver_tracking: DAY.positions,
    deliveries: DAY.stops,
    addresses: DAY.stops,
    routes: DAY.routes,
    events: DAY.stops * DAY.eventsPerStop + DAY.routes * DAY.eventsPerRoute,
    outbox: DAY.stops * DAY.messagesPerStop,
    webhook_deliveries: (DAY.stops * DAY.eventsPerStop + DAY.routes * DAY.eventsPerRoute) * DAY.webhookEndpoints,
    idempotency_keys: DAY.stops * DAY.idempotencyKeysPerStop,
  };
  console.log("\nrows and bytes per active driver and day (model: position every 10 s for 9 h, 100 stops, 2 routes, 2 messages and 3 events per stop, 3 events per route, 1 webhook endpoint, no positions in the event log, 3 idempotency keys per stop):");
  let total = 0;
  for (const [t, n] of Object.entries(daily)) {
    total += n * perRow[t];
    console.log(`  ${t.padEnd(20)} ${String(Math.round(n)).padStart(6)} rows  ${((n * perRow[t]) / 1024).toFixed(1).padStart(7)} KB${KEEP[t] ? `  (kept ${KEEP[t]} days)` : "  (kept)"}`);
  }
  console.log(`  ${"total".padEnd(20)} ${"".padStart(6)}       ${(total / 1024).toFixed(1).padStart(7)} KB`);

  // A driver-day in the R2 archive: the gzip NDJSON of position-archive.ts, for a day of positions like the ones above.
  const line = (i) => JSON.stringify({ id: 1_000_000 + i, timestamp: new Date(Date.UTC(2026, 10, 26, 7) + i * 10_000).toISOString().replace(".000Z", "Z"), lng: 13.4 + (i % 1000) * 1e-4 + Math.sin(i) * 1e-5, lat: 52.5 + (i % 700) * 1e-4 });
  const archived = gzipSync(Array.from({ length: DAY.positions }, (_, i) => line(i)).join("\n") + "\n").length;
  console.log(`  archive (R2)         one gzip NDJSON per driver-day: ${(archived / 1024).toFixed(1)} KB (${(archived / DAY.positions).toFixed(1)} B a position)`);

  /** Days until 10 GB, day by day: each pruned table holds at most its days kept, the rest grows on. */
  const daysUntilFull = (drivers, keep) => {
    for (let day = 1; day < 100_000; day++) {
      let bytes = 0;
      for (const [t, n] of Object.entries(daily)) bytes += n * perRow[t] * drivers * Math.min(day, keep[t] ?? Infinity);
      if (bytes >= LIMIT) return day;
    }
    return Infinity;
  };
  console.log(`\ndays until 10 GB (one D1 database):`);
  console.log(`  active drivers   without retention   with retention   positions kept ${SHORT_POSITIONS} days`);
  for (const drivers of [10, 100, 1000]) {
    const cells = [daysUntilFull(drivers, {}), daysUntilFull(drivers, KEEP), daysUntilFull(drivers, { ...KEEP, driver_tracking: SHORT_POSITIONS })];
    console.log(`  ${String(drivers).padStart(14)}   ${String(cells[0]).padStart(17)}   ${String(cells[1]).padStart(14)}   ${String(cells[2]).padStart(22)}`);
  }
} finally {
  service.stop();
  process.exit(0);
}
