#!/usr/bin/env node
/**
 * How long a new order takes to find its running tour, and a re-plan of the running tours (issue 46): a local
 * `wrangler dev`, one company with
 * `--tours` vans (default 50) of capacity `--stops` (default 40) planned over tours x stops deliveries around
 * Berlin, every tour assigned to its driver, accepted and on the way, each driver's position at its second stop.
 * Then `POST /calcroute/insert` for new deliveries at random places: `--dry` dry runs (prices only) and `--writes`
 * insertions that replace the chosen route. Prints the latency of each kind (through the API, so the D1 reads, the
 * matrices and the pricing of every tour) and how many tours were priced. Then `POST /calcroute/replan` of every
 * tour (from where its driver is, `--seconds` of search) against a fresh plan of the same stops from the depot in a
 * second company with the same vans: the time of each and the distance of both.
 *
 *   npm run bench:insert [-- --tours 50 --stops 40 --dry 10 --writes 5 --seconds 30 --port 8799]
 */
import { parseArgs } from "node:util";
import { startService } from "./bench-lib.mjs";

const { values } = parseArgs({
  options: {
    port: { type: "string", default: "8799" },
    tours: { type: "string", default: "50" },
    stops: { type: "string", default: "40" },
    dry: { type: "string", default: "10" },
    writes: { type: "string", default: "5" },
    seed: { type: "string", default: "1" },
    seconds: { type: "string", default: "30" },
  },
});
const tours = Number(values.tours);
const perTour = Number(values.stops);
let state = Number(values.seed);
const random = () => ((state = (state * 1103515245 + 12345) % 2147483648) / 2147483648);
/** A point within about 12 km of the depot. */
const somewhere = () => ({ lat: 52.5317 + (random() - 0.5) * 0.22, lng: 13.3849 + (random() - 0.5) * 0.36 });

const service = await startService({ port: values.port });
const { call, company, user, sql } = service;
const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
const figures = (ms) => {
  const s = [...ms].sort((a, b) => a - b);
  return `median ${Math.round(percentile(s, 0.5))} ms, p90 ${Math.round(percentile(s, 0.9))} ms, max ${Math.round(s[s.length - 1])} ms (n = ${s.length})`;
};

try {
  const co = await company();
  const api = (method, path, body, token = co.token) => call(method, `/${co.slug}/api${path}`, { body, token });
  const must = async (what, promise, status = 200) => {
    const res = await promise;
    if (res.status !== status) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const window = { pdt_from: new Date(Date.now() - 3_600_000).toISOString(), pdt_to: new Date(Date.now() + 14 * 3_600_000).toISOString() };
  const drivers = [];
  for (let i = 0; i < tours; i++) {
    await must("vehicle", api("POST", "/vehicle", { name: `Van ${i + 1}`, capacity_1: perTour }));
    drivers.push(await user(co.slug, "driver", `driver${i + 1}@${co.slug}.example`));
  }
  sql(`update users set active = 1 where company_id = ${co.id} and usertype = 'driver';`);
  const deliverydata = Array.from({ length: tours * perTour }, () => ({ ...somewhere(), ...window, els: 3, load: 1 }));
  let seconds = performance.now();
  const started = await must("routing", api("POST", "/calcroute/optimized/timewindow?async=true&time_budget_seconds=30", { deliverydata }), 202);
  let status;
  do {
    await new Promise((r) => setTimeout(r, 1000));
    status = await must("status", api("GET", `/process/status/${started.process_id}`));
  } while (status.final.status !== "finished" && status.final.status !== "failed");
  if (status.final.status !== "finished") throw new Error(`routing failed: ${JSON.stringify(status)}`);
  const planned = (await must("routes", api("GET", `/process/status/${started.process_id}/final?response_data=base`))).objects;
  console.log(`planned ${planned.length} tours of ${tours * perTour} deliveries in ${((performance.now() - seconds) / 1000).toFixed(0)} s`);
  for (const [i, route] of planned.entries()) {
    const driver = drivers[i];
    await must("assign", api("PATCH", `/route/${route.id}`, { driver_id: driver.id }));
    await must("accept", api("POST", `/setroutestatus/${route.id}`, { status: 2 }, driver.token));
    await must("start", api("PATCH", `/route/${route.id}`, { status: 3 }, driver.token));
    const second = [...route.deliveries].sort((a, b) => a.orderindex - b.orderindex)[1] ?? route.deliveries[0];
    await must("position", api("POST", "/drivertracking", { driver_id: driver.id, position: second.delivery_address }, driver.token));
  }

  const newDelivery = async () => {
    const address = await must("address", api("POST", "/address", { ...somewhere(), city: "Berlin", country: "DE" }), 201);
    return (await must("delivery", api("POST", "/delivery", { deliverylocation_id: address.id, ...window, els: 3 }), 201)).id;
  };
  const timed = async (body) => {
    const t = performance.now();
    const res = await api("POST", "/calcroute/insert", body);
    return { ms: performance.now() - t, res };
  };
  const dry = [];
  let priced = 0;
  let feasible = 0;
  for (let i = 0; i < Number(values.dry); i++) {
    const { ms, res } = await timed({ deliveryids: [await newDelivery()], dry_run: true });
    if (res.status !== 200) throw new Error(`dry run: ${res.status} ${JSON.stringify(res.body)}`);
    dry.push(ms);
    priced += res.body.insertions[0].candidates.length;
    feasible += res.body.insertions[0].candidates.filter((c) => c.feasible).length;
  }
  const writes = [];
  const added = [];
  for (let i = 0; i < Number(values.writes); i++) {
    const { ms, res } = await timed({ deliveryids: [await newDelivery()] });
    if (res.status !== 200) throw new Error(`insert: ${res.status} ${JSON.stringify(res.body)}`);
    writes.push(ms);
    added.push(res.body.insertions[0].candidates[0].added_distance);
  }
  // The rest of the day re-planned, against a fresh plan of the same stops in a second company with the same vans.
  const untilDone = async (processId, apiOf = api) => {
    for (;;) {
      await new Promise((r) => setTimeout(r, 1000));
      const state = await must("status", apiOf("GET", `/process/status/${processId}`));
      if (state.final.status === "finished") return state;
      if (state.final.status === "failed") throw new Error(`process failed: ${JSON.stringify(state)}`);
    }
  };
  const km = (routes) => (routes.reduce((sum, r) => sum + r.distance, 0) / 1000).toFixed(1);
  const running = (await must("routes", api("GET", "/route?results_per_page=1000"))).objects.filter((r) => r.status === 3);
  const open = running.flatMap((r) => r.deliveries.filter((d) => d.status === 1));
  seconds = performance.now();
  const replan = await must("replan", api("POST", `/calcroute/replan?async=true&time_budget_seconds=${values.seconds}`, {}), 202);
  const replanState = await untilDone(replan.process_id);
  const replanMs = performance.now() - seconds;
  const replanned = (await must("replanned", api("GET", `/process/status/${replan.process_id}/final?response_data=base`))).objects;
  const left = JSON.parse(replanState.routing.meta).unassigned_deliveries?.length ?? 0;
  const fresh = await company();
  const freshApi = (method, path, body) => call(method, `/${fresh.slug}/api${path}`, { body, token: fresh.token });
  for (let i = 0; i < tours; i++) await must("vehicle", freshApi("POST", "/vehicle", { name: `Van ${i + 1}`, capacity_1: perTour }));
  const same = open.map((d) => ({ lng: d.delivery_address.coordinates[0], lat: d.delivery_address.coordinates[1], ...window, els: 3, load: d.load ?? 0 }));
  seconds = performance.now();
  const freshRun = await must("fresh plan", freshApi("POST", `/calcroute/optimized/timewindow?async=true&time_budget_seconds=${values.seconds}&num_vehicles=${tours}&objective=cost`, { deliverydata: same }), 202);
  await untilDone(freshRun.process_id, freshApi);
  const freshMs = performance.now() - seconds;
  const freshRoutes = (await must("fresh routes", freshApi("GET", `/process/status/${freshRun.process_id}/final?response_data=base`))).objects;
  console.log(
    `re-plan of ${running.length} tours on the way (${open.length} open stops, ${values.seconds} s search): ${(replanMs / 1000).toFixed(1)} s, ` +
      `${replanned.length} tours, ${km(running)} km planned before -> ${km(replanned)} km (from the drivers' positions), ${left} left open`,
  );
  console.log(`fresh plan of the same ${same.length} stops from the depot, same vans and search: ${(freshMs / 1000).toFixed(1)} s, ${freshRoutes.length} tours, ${km(freshRoutes)} km`);
  console.log(`dry run over ${tours} tours on the way (${perTour} stops each): ${figures(dry)}; ${(priced / dry.length).toFixed(0)} tours priced, ${(feasible / dry.length).toFixed(0)} could take it`);
  console.log(`insertion written (route replaced): ${figures(writes)}; added ${added.map((m) => `${(m / 1000).toFixed(1)} km`).join(", ")}`);
} finally {
  service.stop();
}
