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
 *   npm run bench:api                             hot API paths: tracking batches, lists, search
 */
import { parseArgs } from "node:util";
import { sleep, startService } from "./bench-lib.mjs";

const { values } = parseArgs({
  options: {
    mode: { type: "string", default: "routing" },
    sizes: { type: "string", default: "200,1000" },
    port: { type: "string", default: "8799" },
    seconds: { type: "string" },
    consumers: { type: "string" },
    "fanout-min": { type: "string" },
  },
});
const vars = values["fanout-min"] ? { ROUTING_FANOUT_MIN_STOPS: values["fanout-min"] } : {};
/** `max_concurrency` on the routing queue's consumer (the first `[[queues.consumers]]` entry for dispatch-routing). */
const config = values.consumers ? (text) => text.replace(/(\[\[queues\.consumers\]\]\nqueue = "dispatch-routing"\n)/, `$1max_concurrency = ${Number(values.consumers)}\n`) : undefined;
const { call, company, user, stop } = await startService({ port: values.port, vars, config });

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
  else await benchRouting();
} finally {
  stop();
  process.exit(0);
}
