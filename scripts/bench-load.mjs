#!/usr/bin/env node
/**
 * Load through a local `wrangler dev`: the hot paths under 1, 16 and 64
 * concurrent connections (autocannon), each path's throughput as a ratio of a
 * trivial baseline route measured in the same run. Prints figures; asserts
 * nothing.
 *
 *   npm run bench:load [-- --seconds 8 --connections 1,16,64 --rounds 3 --profile --paths delivery,route]
 *
 * `--paths` runs only the paths whose label contains one of the words (and the
 * baseline). Each line starts with the size of the path's answer.
 *
 * `--gzip` sends `Accept-Encoding: gzip` with every request, as browsers and
 * the driver app do: miniflare's entry worker then compresses JSON answers as
 * Cloudflare's edge does (the size printed is the compressed answer's).
 * Without it autocannon asks for none and moves the answers uncompressed.
 *
 * `--rounds N` repeats the whole set of paths N times per connection count and
 * prints each path's median ratio to the baseline of its own round: on a
 * shared machine a single run's ratio moves with the neighbours' load.
 *
 * Every run also reports the CPU milliseconds per request of each process
 * involved (Linux `/proc`, process-cpu.mjs): wrangler's local proxy, the
 * workerd that runs the Worker and the D1 simulator, and the load generator.
 *
 * `--profile` (an unminified bundle) samples the worker isolate's CPU during each run (V8's sampling
 * profiler over the devtools protocol, every 0.2 ms) and adds its busy
 * milliseconds per request (samples that were not idle, GC included, divided
 * by the requests answered; `performance.now()` cannot measure this inside
 * workerd, where it only advances across I/O) and, at the end, the
 * functions with the most self time per path: what the worker itself spends,
 * apart from wrangler's local proxy and the load generator.
 *
 * In each round the reads run first, then the writes; what the writes added
 * is deleted after each round, so every read measures the company as seeded.
 *
 * Seeded: 1 company, 50 drivers (20 positions each), 5,000 deliveries on
 * 500 addresses, 100 routes of 40 deliveries (1,000 deliveries unrouted).
 * The per-company limits (token bucket and platform binding) are raised for
 * this run only; otherwise one company is capped at 200 requests/s.
 */
import autocannon from "autocannon";
import { loadavg as loadavg1 } from "node:os";
import { gzipSync } from "node:zlib";
import { parseArgs } from "node:util";
import { startService } from "./bench-lib.mjs";
import { ROLES, processCpu, runtimePid } from "./process-cpu.mjs";
import { profileIsolates, runtimeIsolates, workerTarget } from "./worker-profile.mjs";

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "8" },
    connections: { type: "string", default: "1,16,64" },
    port: { type: "string", default: "8798" },
    profile: { type: "boolean", default: false },
    rounds: { type: "string", default: "1" },
    paths: { type: "string" },
    gzip: { type: "boolean", default: false },
  },
});
const UNLIMITED = 1_000_000;
const INSPECTOR_PORT = Number(values.port) + 1000;
const service = await startService({
  port: values.port,
  inspectorPort: values.profile ? INSPECTOR_PORT : undefined,
  vars: { RATE_LIMIT_PER_SECOND: String(UNLIMITED) },
  config: (toml) => toml.replace(/simple = \{ limit = \d+, period = (\d+) \}/, `simple = { limit = ${UNLIMITED}, period = $1 }`),
  // A profile names the worker's functions only when the bundle keeps them.
  args: values.profile ? ["--minify=false"] : [],
});
const cpu = processCpu(service.pid, Number(values.port));

const DRIVERS = 50;
const ADDRESSES = 500;
const ROUTES = 100;
const PER_ROUTE = 40;
const DELIVERIES = 5000;

const day = new Date();
day.setUTCDate(day.getUTCDate() + 1);
const at = (h, m = 0) => new Date(Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate(), h, m)).toISOString().replace(".000Z", "Z");

async function seed() {
  const { slug, id: companyId, token } = await service.company();
  const drivers = [];
  for (let i = 0; i < DRIVERS; i += 10) drivers.push(...(await Promise.all(Array.from({ length: 10 }, (_, k) => service.user(slug, "driver", `driver-${i + k}@${slug}.example`)))));
  const depot = (await service.call("GET", `/${slug}/api/company`, { token })).body.objects[0].location_id;

  let s = 7;
  const rnd = () => (s = (s * 16807) % 2147483647) / 2147483647;
  const sql = [];
  // D1 caps a statement at 100 kB: 100 rows per INSERT.
  const insert = (head, tuples) => {
    for (let i = 0; i < tuples.length; i += 100) sql.push(`${head} VALUES\n${tuples.slice(i, i + 100).join(",\n")};`);
  };
  insert(
    "INSERT INTO addresses (company_id, contactcompany, street, housenumber, postalcode, city, country, lng, lat, geocode_source)",
    Array.from({ length: ADDRESSES }, (_, i) => `(${companyId}, 'Kunde ${i}', 'Teststraße', '${i + 1}', '10${String(100 + (i % 900)).padStart(3, "0")}', 'Berlin', 'DE', ${(13.15 + rnd() * 0.5).toFixed(5)}, ${(52.4 + rnd() * 0.25).toFixed(5)}, 'input')`),
  );
  const firstAddress = `(SELECT min(id) FROM addresses WHERE company_id = ${companyId} AND contactcompany LIKE 'Kunde %')`;
  insert(
    "INSERT INTO routes (company_id, driver_id, status, distance, gross_duration, net_duration, routebase_address_id, custom_id, tst_from, tst_to)",
    Array.from({ length: ROUTES }, (_, r) => `(${companyId}, ${drivers[r % DRIVERS].id}, 1, ${20000 + r * 100}, ${6 * 3600}, ${4 * 3600}, ${depot}, 'tour-${r}', '${at(7)}', '${at(8)}')`),
  );
  const firstRoute = `(SELECT min(id) FROM routes WHERE company_id = ${companyId})`;
  insert(
    "INSERT INTO deliveries (company_id, deliverylocation_id, supplierlocation_id, pdt_from, pdt_to, els, load, custom_id, route_id, orderindex, status)",
    Array.from({ length: DELIVERIES }, (_, i) => {
      const h = 6 + Math.floor(rnd() * 10);
      const routed = i < ROUTES * PER_ROUTE;
      return `(${companyId}, ${firstAddress} + ${i % ADDRESSES}, ${depot}, '${at(h)}', '${at(h + 3)}', 3, ${1 + (i % 3)}, 'b-${i}', ${routed ? `${firstRoute} + ${Math.floor(i / PER_ROUTE)}` : "NULL"}, ${routed ? i % PER_ROUTE : "NULL"}, ${routed ? 1 : 0})`;
    }),
  );
  insert(
    "INSERT INTO driver_tracking (company_id, driver_id, timestamp, lng, lat)",
    drivers.flatMap((d) => Array.from({ length: 20 }, (_, k) => `(${companyId}, ${d.id}, '${new Date(Date.now() - (20 - k) * 60_000).toISOString().replace(/\.\d+Z$/, "Z")}', ${(13.3 + rnd() * 0.2).toFixed(5)}, ${(52.45 + rnd() * 0.1).toFixed(5)})`)),
  );
  service.sql(sql.join("\n"));

  const routeList = await service.call("GET", `/${slug}/api/routemetadata?results_per_page=1`, { token });
  const routeId = routeList.body.objects[0].id;
  const addressId = (await service.call("GET", `/${slug}/api/address?results_per_page=1`, { token })).body.objects[0].id;
  return { slug, companyId, token, driver: drivers[0], routeId, addressId };
}

const { slug, companyId, token, driver, routeId, addressId } = await seed();
const api = `/${slug}/api`;
const encoding = values.gzip ? { "accept-encoding": "gzip" } : {};
const auth = (t) => ({ authorization: `JWT ${t}`, ...encoding });
const json = { "content-type": "application/json" };
const q = JSON.stringify({
  filters: [
    { name: "status", op: "==", val: 1 },
    { name: "pdt_from", op: ">=", val: at(8) },
  ],
  order_by: [{ field: "pdt_from", direction: "asc" }],
});
// The batch's positions are newer than every seeded one (those end a minute before the seed), so `undoWrites` finds them.
const batchFrom = new Date(Math.floor(Date.now() / 1000) * 1000 - 20_000);
const trackingBatch = JSON.stringify(
  Array.from({ length: 20 }, (_, k) => ({ timestamp: new Date(batchFrom.getTime() + k * 1000).toISOString(), position: { type: "Point", coordinates: [13.4 + k * 1e-4, 52.5] } })),
);
const LOAD_CUSTOM_ID = "load";

const allTargets = [
  { label: "GET /health (baseline)", method: "GET", path: "/health", headers: encoding },
  { label: "GET /deliverystatus (auth chain only)", method: "GET", path: `${api}/deliverystatus`, headers: auth(token) },
  { label: "GET /delivery, page of 100, q filter", method: "GET", path: `${api}/delivery?results_per_page=100&q=${encodeURIComponent(q)}`, headers: auth(token) },
  { label: "GET /delivery, page of 100, default order", method: "GET", path: `${api}/delivery?results_per_page=100`, headers: auth(token) },
  { label: `GET /route/<id> (${PER_ROUTE} deliveries)`, method: "GET", path: `${api}/route/${routeId}`, headers: auth(token) },
  { label: `GET /driverposition (${DRIVERS} drivers)`, method: "GET", path: `${api}/driverposition?results_per_page=100`, headers: auth(token) },
  // The write paths run after the reads of each round, and what they wrote is deleted before the next round (undoWrites).
  { label: "POST /drivertracking, batch of 20", method: "POST", path: `${api}/drivertracking`, headers: { ...auth(driver.token), ...json }, body: trackingBatch },
  {
    label: "POST /delivery",
    method: "POST",
    path: `${api}/delivery`,
    headers: { ...auth(token), ...json },
    body: JSON.stringify({ deliverylocation_id: addressId, pdt_from: at(9), pdt_to: at(12), els: 3, load: 1, custom_id: LOAD_CUSTOM_ID }),
  },
];

/**
 * Deletes what the write paths added (a round adds ~800 deliveries and ~20,000 positions at 64 connections), so every
 * round and every read measures the company as seeded: the `q` page counts its matches, `/driverposition` looks up the
 * newest position per driver. Answers the counts left (as seeded). The database file keeps its size (SQLite reuses the pages).
 */
async function undoWrites() {
  service.sql(
    `DELETE FROM deliveries WHERE company_id = ${companyId} AND custom_id = '${LOAD_CUSTOM_ID}';\n` +
      `DELETE FROM driver_tracking WHERE company_id = ${companyId} AND timestamp >= '${batchFrom.toISOString().slice(0, 19)}';`,
  );
  const total = async (path) => (await service.call("GET", `${api}/${path}?results_per_page=1`, { token })).body.num_results;
  return { deliveries: await total("delivery"), positions: await total("drivertracking") };
}

/** One autocannon run: requests/s over the whole run, p50 and p99 latency (ms), non-2xx answers and errors. */
function load(target, connections) {
  return new Promise((resolveRun, reject) => {
    autocannon(
      { url: `${service.base}${target.path}`, method: target.method, headers: target.headers, body: target.body, connections, duration: Number(values.seconds) },
      (err, r) => (err ? reject(err) : resolveRun({ requests: r.requests.total, rps: r.requests.total / r.duration, p50: r.latency.p50, p99: r.latency.p99, bad: r.non2xx + r.errors + r.timeouts })),
    );
  });
}

/** CPU ms per request of each process role (process-cpu.mjs) between two samples. */
function perRequest(before, after, requests) {
  return Object.fromEntries(Object.keys(after).map((role) => [role, (after[role] - before[role]) / Math.max(1, requests)]));
}

/**
 * The isolates of the runtime profiled with `--profile`, by the name the figures give them: the Worker, miniflare's
 * entry worker (every request passes it), the D1 simulator (its entry and the database object), the rate limiter
 * binding, the local log collector.
 */
const ISOLATES = {
  worker: ["worker"],
  entry: ["core:entry"],
  d1: ["d1:db:entry", "d1:db"],
  ratelimit: ["ratelimit:ns:entry", "ratelimit:ns"],
  logs: ["core:user:miniflare-observability-collector"],
};
/** Devtools targets of those isolates (the Worker through wrangler's inspector proxy, the others at workerd's own inspector). */
let profileTargets;

async function run(target, connections) {
  const before = cpu();
  const measured = values.profile ? await profileIsolates(profileTargets, () => load(target, connections)) : { result: await load(target, connections) };
  const { result } = measured;
  const requests = Math.max(1, result.requests);
  const processMs = perRequest(before, cpu(), result.requests);
  if (!measured.isolates) return { ...result, processMs };
  // A group whose profile did not come back has no figure (rather than a zero).
  const isolateMs = Object.fromEntries(
    Object.entries(ISOLATES).map(([name, ids]) => [name, ids.every((id) => measured.isolates[id]) ? ids.reduce((sum, id) => sum + measured.isolates[id].busyMs, 0) / requests : undefined]),
  );
  const top = Object.fromEntries(Object.entries(ISOLATES).map(([name, ids]) => [name, measured.isolates[ids.at(-1)]?.top ?? []]));
  return { ...result, processMs, isolateMs, top };
}

const chosen = values.paths ? values.paths.split(",").map((p) => p.trim().toLowerCase()) : undefined;
// The baseline always runs first: every ratio is against it.
const targets = chosen ? allTargets.filter((t, i) => i === 0 || chosen.some((p) => t.label.toLowerCase().includes(p))) : allTargets;

// One sequential warm-up per path: bundles loaded, caches filled, statements prepared; the size of each answer
// (wrangler's proxy and the load generator spend CPU in proportion to it).
const answerBytes = new Map();
for (const target of targets) {
  const res = await fetch(`${service.base}${target.path}`, { method: target.method, headers: target.headers, body: target.body });
  if (!res.ok) throw new Error(`${target.label}: ${res.status} ${await res.text()}`);
  const bytes = Buffer.from(await res.arrayBuffer());
  // The size as sent: miniflare's entry worker compresses JSON like Cloudflare's edge when the client accepts gzip
  // (fetch decodes it; its gzip here stands for the runtime's, whose level may differ slightly).
  answerBytes.set(target.label, values.gzip ? gzipSync(bytes).byteLength : bytes.byteLength);
}
const writes = targets.some((t) => t.method !== "GET");
if (writes) await undoWrites();
if (values.profile) {
  const others = await runtimeIsolates(runtimePid(service.pid, Number(values.port)));
  profileTargets = { worker: workerTarget(INSPECTOR_PORT), ...Object.fromEntries(Object.values(ISOLATES).flat().filter((id) => others[id]).map((id) => [id, others[id]])) };
  const missing = Object.values(ISOLATES).flat().filter((id) => !profileTargets[id]);
  if (missing.length) console.log(`(not profiled, not found in the runtime's inspector: ${missing.join(", ")})`);
}

console.log(`load through local wrangler dev, ${values.seconds} s per run, ${values.rounds} round(s); ${DELIVERIES} deliveries, ${ROUTES} routes, ${DRIVERS} drivers seeded`);
console.log("figures on a shared machine (2 cores, load generator and workerd on the same cores) are noisy: compare ratios, not absolutes");
console.log(`CPU ms per request of each process: ${Object.entries(ROLES).map(([role, what]) => `${role} = ${what}`).join("; ")}`);
if (values.profile) console.log(`busy ms per request of the isolates inside runtime (V8 profiles): ${Object.entries(ISOLATES).map(([name, ids]) => `${name} = ${ids.join(" + ")}`).join("; ")}`);
console.log();
const profiles = new Map();
const loadavg = () => loadavg1().map((l) => l.toFixed(1)).join(" / ");
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
const kb = ({ label }) => `${(answerBytes.get(label) / 1024).toFixed(1).padStart(6)} KB`;
const ms = (x) => (x === undefined ? "  -" : x.toFixed(1).padStart(4));
/** The CPU columns of a line: ms/req per process role, and per isolate of the runtime when profiled. */
const cpuColumns = ({ processMs, isolateMs }) =>
  `  cpu ms/req: ${["proxy", "runtime", "loadgen"].map((role) => `${role} ${ms(processMs[role])}`).join(" ")}` +
  (isolateMs ? ` | in runtime: ${Object.keys(ISOLATES).map((name) => `${name} ${ms(isolateMs[name])}`).join(" ")}` : "");
for (const connections of values.connections.split(",").map(Number)) {
  /** Per target: the ratio to the baseline of each round, the CPU per request of each process and of the worker. */
  const rounds = new Map(targets.map((t) => [t.label, { ratios: [], processMs: [], isolateMs: [] }]));
  for (let round = 1; round <= Number(values.rounds); round++) {
    console.log(`${connections} connection${connections === 1 ? "" : "s"}, round ${round} (load average 1/5/15 min before: ${loadavg()})`);
    let baseline;
    for (const target of targets) {
      const r = await run(target, connections);
      baseline ??= r.rps;
      const failures = r.bad ? `  (${r.bad} non-2xx/errors)` : "";
      console.log(
        `  ${target.label.padEnd(42)} ${kb(target)} ${r.rps.toFixed(1).padStart(6)} req/s  p50 ${String(r.p50).padStart(4)} ms  p99 ${String(r.p99).padStart(4)} ms  ${(r.rps / baseline).toFixed(2).padStart(5)} x baseline${cpuColumns(r)}${failures}`,
      );
      const kept = rounds.get(target.label);
      kept.ratios.push(r.rps / baseline);
      kept.processMs.push(r.processMs);
      if (r.isolateMs) kept.isolateMs.push(r.isolateMs);
      if (r.top) profiles.set(target.label, r.top);
    }
    if (writes) {
      const left = await undoWrites();
      console.log(`  (writes deleted: the company has ${left.deliveries} deliveries and ${left.positions} positions again)`);
    }
  }
  if (Number(values.rounds) > 1) {
    console.log(`${connections} connections, median of ${values.rounds} rounds (each ratio against the baseline of its own round; CPU: median per process)`);
    const medians = (samples) =>
      Object.fromEntries(Object.keys(samples[0]).map((key) => [key, ((xs) => (xs.length ? median(xs) : undefined))(samples.map((p) => p[key]).filter((x) => x !== undefined))]));
    for (const [label, { ratios, processMs, isolateMs }] of rounds) {
      const cpuText = cpuColumns({ processMs: medians(processMs), isolateMs: isolateMs.length ? medians(isolateMs) : undefined });
      console.log(`  ${label.padEnd(42)} ${kb({ label })} ${median(ratios).toFixed(2).padStart(5)} x baseline  (${ratios.map((x) => x.toFixed(2)).join(", ")})${cpuText}`);
    }
  }
  console.log();
}
for (const [label, top] of profiles) {
  for (const name of ["worker", "d1"]) {
    console.log(`\n${label}: most self time in ${name === "worker" ? "the Worker" : "the D1 simulator's database object"} (last run)`);
    for (const { name: fn, share } of top[name]) console.log(`  ${(share * 100).toFixed(1).padStart(5)}%  ${fn}`);
  }
}
service.stop();
process.exit(0);
