#!/usr/bin/env node
/**
 * End-to-end benchmarks through a local `wrangler dev` (fresh state in a
 * temporary folder). Prints figures; asserts nothing. Load under concurrency:
 * bench-load.mjs.
 *
 *   npm run bench:routing [-- --sizes 200,1000]   async routing: request -> process `final` finished
 *       [--seconds S]        search time per plan (time_budget_seconds; default: from the plan's size)
 *       [--consumers K]      routing consumers at once (max_concurrency of dispatch-routing; default: wrangler.toml)
 *       [--fanout-min N]     ROUTING_FANOUT_MIN_STOPS (plans from N deliveries go to consumers in parts)
 *   npm run bench:routing -- --instance FILE [--seconds 60] [--solver-clock wall|cpu|matched]
 *                        a Solomon / Gehring & Homberger instance through the API (gh-deliveries.mjs), then
 *                        the solver in-process on the problem the service builds and on the instance itself
 *                        (scripts/solve-as-service.ts, same seed), side by side: the solver's budget is the
 *                        same seconds on the wall clock (default) or of CPU, or (`matched`) as much CPU time
 *                        as the service's processes used for the whole request (a loaded machine)
 *   npm run bench:api                             hot API paths: tracking batches, lists, search
 */
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { parseArgs } from "node:util";
import { sleep, startService } from "./bench-lib.mjs";
import { METRES_PER_UNIT, parseInstance, routingRequest } from "./gh-deliveries.mjs";

const { values } = parseArgs({
  options: {
    mode: { type: "string", default: "routing" },
    sizes: { type: "string", default: "200,1000" },
    port: { type: "string", default: "8799" },
    seconds: { type: "string" },
    consumers: { type: "string" },
    "fanout-min": { type: "string" },
    instance: { type: "string" },
    "solver-clock": { type: "string", default: "wall" },
  },
});
const vars = values["fanout-min"] ? { ROUTING_FANOUT_MIN_STOPS: values["fanout-min"] } : {};
/** `max_concurrency` on the routing queue's consumer (the first `[[queues.consumers]]` entry for dispatch-routing). */
const config = values.consumers ? (text) => text.replace(/(\[\[queues\.consumers\]\]\nqueue = "dispatch-routing"\n)/, `$1max_concurrency = ${Number(values.consumers)}\n`) : undefined;
const { call, company, user, stop, pid } = await startService({ port: values.port, vars, config });

/** A seeded scatter of deliveries over Berlin with two-hour windows tomorrow. */
function deliveryData(n, seed = 11) {
  let s = seed;
  const rnd = () => (s = (s * 16807) % 2147483647) / 2147483647;
  const day = new Date();
  day.setUTCDate(day.getUTCDate() + 1);
  const at = (h) => new Date(Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate(), h)).toISOString();
  return Array.from({ length: n }, (_, i) => {
    const start = 6 + Math.floor(rnd() * 10);
    return { lat: 52.40 + rnd() * 0.25, lng: 13.15 + rnd() * 0.5, custom_id: `b-${i}`, pdt_from: at(start), pdt_to: at(start + 3), els: 3, load: 1 + Math.floor(rnd() * 3) };
  });
}

const ms = (t) => `${Math.round(t)} ms`;
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];

async function benchRouting() {
  console.log(
    `async routing through the local service (deliverydata import + solve + write); search time ${values.seconds ? `${values.seconds} s` : "from the plan's size"}` +
      `, routing consumers ${values.consumers ?? "as wrangler.toml"}, parts from ${values["fanout-min"] ?? "ROUTING_FANOUT_MIN_STOPS"} deliveries`,
  );
  for (const n of values.sizes.split(",").map(Number)) {
    const { slug, token } = await company();
    const t0 = performance.now();
    const budget = values.seconds ? `&time_budget_seconds=${values.seconds}` : "";
    const started = await call("POST", `/${slug}/api/calcroute/optimized/timewindow?num_vehicles=${Math.ceil(n / 12)}${budget}`, { token, body: { deliverydata: deliveryData(n), vehcapacities: [40] } });
    const accepted = performance.now() - t0;
    if (started.status !== 202) throw new Error(`calcroute ${n}: ${started.status} ${JSON.stringify(started.body)}`);
    let final;
    for (;;) {
      final = (await call("GET", `/${slug}/api/process/status/${started.body.process_id}/final`, { token })).body;
      if (final.status === "finished" || final.status === "failed") break;
      await sleep(250);
    }
    const total = performance.now() - t0;
    if (final.status === "failed") console.log(`  failed: ${final.meta}`);
    const routes = (await call("GET", `/${slug}/api/process/status/${started.body.process_id}?response_data=base`, { token })).body;
    const distance = routes.objects?.reduce((a, r) => a + r.distance, 0) ?? 0;
    const routing = JSON.parse((await call("GET", `/${slug}/api/process/status/${started.body.process_id}/routing`, { token })).body.meta);
    const parts = routing.parts_total ? `; ${routing.parts_done}/${routing.parts_total} parts in${routing.parts_missing ? `, ${routing.parts_missing} missing` : ""}` : "";
    console.log(`${String(n).padStart(5)} deliveries: accepted (202) after ${ms(accepted)}, final ${final.status} after ${ms(total)}; ${routes.num_results ?? 0} tours, ${(distance / 1000).toFixed(1)} km${parts}`);
  }
}

/** CPU seconds used so far by the processes of `wrangler dev` (its process group: wrangler and workerd). */
function serviceCpu() {
  let ticks = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // Fields after the command's closing parenthesis: state ppid pgrp ... utime (14) stime (15).
      const fields = readFileSync(`/proc/${entry}/stat`, "utf8").split(") ").pop().split(" ");
      if (Number(fields[2]) === pid) ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // gone meanwhile
    }
  }
  return ticks / 100;
}

/**
 * One instance through the product path, then the solver on its own (same
 * budget, seed 1): tours, distance in instance units, gap, time to the first
 * plan serving every delivery, and the CPU each got.
 */
async function benchInstance(file) {
  const instance = parseInstance(readFileSync(file, "utf8"));
  const name = basename(file).replace(/\.txt$/i, "");
  const bks = (() => {
    try {
      const line = readFileSync(join(dirname(file), "bks.csv"), "utf8").split(/\r?\n/).find((l) => l.split(",")[0].toUpperCase() === name.toUpperCase());
      return line ? { tours: Number(line.split(",")[1]), distance: Number(line.split(",")[2]) } : null;
    } catch {
      return null;
    }
  })();
  const seconds = Number(values.seconds ?? 60);
  const vehicles = Math.min(instance.fleet, 500);
  const day = new Date();
  day.setUTCHours(0, 0, 0, 0);
  day.setUTCDate(day.getUTCDate() + 1);
  const { slug, token } = await company();
  const cpu0 = serviceCpu();
  const t0 = performance.now();
  const started = await call("POST", `/${slug}/api/calcroute/optimized/timewindow?num_vehicles=${vehicles}&roundtrip=true&time_budget_seconds=${seconds}`, {
    token,
    body: routingRequest(instance, day, vehicles),
  });
  if (started.status !== 202) throw new Error(`calcroute: ${started.status} ${JSON.stringify(started.body)}`);
  const accepted = (performance.now() - t0) / 1000;
  let running = NaN;
  let firstFeasible = NaN;
  let final;
  for (;;) {
    const routing = (await call("GET", `/${slug}/api/process/status/${started.body.process_id}/routing`, { token })).body;
    const meta = routing?.meta ? (typeof routing.meta === "string" ? JSON.parse(routing.meta) : routing.meta) : {};
    const now = (performance.now() - t0) / 1000;
    if (Number.isNaN(running) && routing?.status === "running") running = now;
    if (Number.isNaN(firstFeasible) && meta.unassigned === 0) firstFeasible = now;
    final = (await call("GET", `/${slug}/api/process/status/${started.body.process_id}/final`, { token })).body;
    if (final.status === "finished" || final.status === "failed") break;
    await sleep(250);
  }
  const total = (performance.now() - t0) / 1000;
  const cpu = serviceCpu() - cpu0;
  if (final.status === "failed") console.log(`service failed: ${JSON.stringify(final.meta)}`);
  const routes = (await call("GET", `/${slug}/api/process/status/${started.body.process_id}?response_data=base`, { token })).body;
  const service = {
    run: "service",
    tours: routes.num_results ?? 0,
    distance: (routes.objects?.reduce((a, r) => a + r.distance, 0) ?? 0) / METRES_PER_UNIT,
    firstFeasible,
    seconds: total,
    cpu,
    note: `202 after ${accepted.toFixed(1)} s, running after ${running.toFixed(1)} s`,
  };
  // `--solver-clock matched`: the solver gets as much CPU time as the service's processes used (search and all), for a loaded machine.
  const matched = values["solver-clock"] === "matched";
  const solverSeconds = matched ? cpu : seconds;
  const solverClock = matched ? "cpu" : values["solver-clock"];
  const solver = spawnSync("npx", ["tsx", "scripts/solve-as-service.ts", "--instance", file, "--seconds", String(solverSeconds), "--vehicles", String(vehicles), "--clock", solverClock], {
    encoding: "utf8",
  });
  if (solver.status !== 0) throw new Error(`solver: ${solver.stderr}`);
  const rows = [service, ...solver.stdout.trim().split("\n").map((l) => JSON.parse(l))];
  console.log(
    `${name}, ${instance.customers.length} deliveries, seed 1; the service ${seconds} s, the solver ${solverSeconds.toFixed(1)} s ${solverClock === "cpu" ? "of CPU" : "wall"}; BKS ${bks ? `${bks.tours} tours, ${bks.distance}` : "unknown"}`,
  );
  console.log("run         tours  distance (units)     gap  first feasible  finished    CPU");
  for (const r of rows) {
    const gap = bks ? `${(((r.distance - bks.distance) / bks.distance) * 100).toFixed(2)}%` : "-";
    const label = { service: "API", converted: "solver, same problem", instance: "solver, instance" }[r.run] ?? r.run;
    console.log(
      `${label.padEnd(21)} ${String(r.tours).padStart(4)}  ${r.distance.toFixed(1).padStart(10)}  ${gap.padStart(7)}  ${`${r.firstFeasible.toFixed(2)} s`.padStart(14)}  ${`${r.seconds.toFixed(1)} s`.padStart(8)}  ${`${r.cpu.toFixed(1)} s`.padStart(7)}${r.note ? `  (${r.note})` : ""}${r.violations ? `  ${r.violations} VIOLATIONS` : ""}`,
    );
  }
}

async function benchApi() {
  const { slug, token } = await company();
  const driver = await user(slug, "driver", `d@${slug}.example`);
  const driverToken = driver.token;
  const timed = async (label, times, fn) => {
    const samples = [];
    for (let i = 0; i < times; i++) {
      const t = performance.now();
      const res = await fn(i);
      samples.push(performance.now() - t);
      if (res.status >= 400) throw new Error(`${label}: ${res.status} ${JSON.stringify(res.body)}`);
    }
    console.log(`${label.padEnd(44)} mean ${ms(mean(samples))}, p95 ${ms(pct(samples, 0.95))} (${times} requests)`);
  };
  await timed("POST /drivertracking, batch of 20 positions", 100, (i) =>
    call("POST", `/${slug}/api/drivertracking`, {
      token: driverToken,
      body: Array.from({ length: 20 }, (_, k) => ({ driver_id: driver.id, timestamp: new Date(Date.now() - (100 - i) * 60_000 + k * 1000).toISOString(), position: { type: "Point", coordinates: [13.4 + k * 1e-4, 52.5] } })),
    }),
  );
  await timed("POST /drivertracking, one position", 100, () =>
    call("POST", `/${slug}/api/drivertracking`, { token: driverToken, body: { driver_id: driver.id, position: { type: "Point", coordinates: [13.41, 52.51] } } }),
  );
  await timed("POST /address (coordinates given)", 100, (i) => call("POST", `/${slug}/api/address`, { token, body: { contactcompany: `Firma ${i}`, contactlastname: `Muster${i}`, lat: 52.5, lng: 13.4 } }));
  await timed("POST /address (geocoded, gazetteer)", 50, () => call("POST", `/${slug}/api/address`, { token, body: { postalcode: "10115", city: "Berlin" } }));
  await timed("GET /searchaddress", 100, (i) => call("GET", `/${slug}/api/searchaddress?query=Firma%20${i}`, { token }));
  await timed("GET /address (page of 100)", 50, () => call("GET", `/${slug}/api/address?results_per_page=100`, { token }));
  await timed("GET /driverposition", 100, () => call("GET", `/${slug}/api/driverposition`, { token }));
}

try {
  if (values.mode === "api") await benchApi();
  else if (values.instance) await benchInstance(values.instance);
  else await benchRouting();
} finally {
  stop();
  process.exit(0);
}
