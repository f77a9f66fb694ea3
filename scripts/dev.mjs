#!/usr/bin/env node
/**
 * Local service in one command: secrets from .dev.vars.example, D1 migrations
 * applied to both local shards (DB, DB_SHARD_1), `wrangler dev` on http://127.0.0.1:8787,
 * the demo company seeded through the operator API, and — when the local
 * service has no base map yet — the made-up demo region's PMTiles archive put
 * into the local R2 bucket, so the console shows streets under the tours.
 */
import { spawn, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { uploadBasemap } from "./basemap-upload.mjs";
import { demoArchive } from "./pmtiles-lib.mjs";

const PORT = process.env.PORT ?? "8787";
const BASE = `http://127.0.0.1:${PORT}`;
const DEMO = { slug: "demo", email: "dispatcher@demo.example", password: "demo-dispatcher" };

if (!existsSync(".dev.vars")) copyFileSync(".dev.vars.example", ".dev.vars");

// Every shard (wrangler.toml: DB, DB_SHARD_1) runs every migration.
for (const shard of ["DB", "DB_SHARD_1"]) {
  const migrate = spawnSync("npx", ["wrangler", "d1", "migrations", "apply", shard, "--local"], { stdio: "inherit", env: { ...process.env, CI: "true" } });
  if (migrate.status !== 0) process.exit(migrate.status ?? 1);
}

const dev = spawn("npx", ["wrangler", "dev", "--ip", "127.0.0.1", "--port", PORT], { stdio: "inherit" });
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => dev.kill(signal));
dev.on("exit", (code) => process.exit(code ?? 0));

async function waitForService() {
  for (let i = 0; i < 120; i++) {
    try {
      if ((await fetch(`${BASE}/openapi.json`)).ok) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error("wrangler dev did not come up");
}

async function seedDemo() {
  const res = await fetch(`${BASE}/_operator/companies`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer dev-operator-token" },
    body: JSON.stringify({
      slug: DEMO.slug,
      companyname: "Demo Logistics",
      depot: { contactcompany: "Demo Logistics depot", street: "Invalidenstraße", housenumber: "117", postalcode: "10115", city: "Berlin", country: "DE", lat: 52.5317, lng: 13.3849 },
      dispatcher: { email: DEMO.email, password: DEMO.password, firstname: "Demo", lastname: "Dispatcher" },
    }),
  });
  if (res.status !== 201 && res.status !== 409) throw new Error(`seeding the demo company failed: ${res.status} ${await res.text()}`);
  const seeded = res.status === 201;
  if (seeded) await seedDemoData();
  console.log(`
  Dispatch service running at ${BASE}
  API reference:   ${BASE}/docs   (OpenAPI: ${BASE}/openapi.json)
  Demo company:    ${BASE}/${DEMO.slug}
  Console:         ${BASE}/${DEMO.slug}/console${seeded ? `?day=${DEMO_DAY}` : ""}   (dispatcher login below)
  Driver app:      ${BASE}/${DEMO.slug}/driver    (driver login below)
  Dispatcher:      ${DEMO.email} / ${DEMO.password}
  Token:           curl -s -X POST ${BASE}/${DEMO.slug}/auth -H 'content-type: application/json' -d '{"email":"${DEMO.email}","password":"${DEMO.password}"}'
  Driver:          driver@demo.example / demo-driver (activation code in the outbox)
  Demo data:       12 open deliveries for tomorrow; route them with
                   POST /${DEMO.slug}/api/calcroute/optimized/timewindow  {"deliveryids": [...]}
  Operator token:  dev-operator-token
`);
}

/** The demo company's zone (its depot is in Berlin), the day after its today, and its UTC offset at an hour of a day. */
const DEMO_ZONE = "Europe/Berlin";
const DEMO_DAY = (() => {
  const today = new Date(`${new Intl.DateTimeFormat("en-CA", { timeZone: DEMO_ZONE }).format(new Date())}T12:00:00Z`);
  today.setUTCDate(today.getUTCDate() + 1);
  return today.toISOString().slice(0, 10);
})();
function berlinOffset(day, hour) {
  const probe = new Date(`${day}T${String(hour).padStart(2, "0")}:00:00Z`);
  const name = new Intl.DateTimeFormat("en", { timeZone: DEMO_ZONE, timeZoneName: "longOffset" }).formatToParts(probe).find((p) => p.type === "timeZoneName").value;
  return name === "GMT" ? "+00:00" : name.slice(3);
}

/** A driver and a day's open deliveries around Berlin, ready for routing. */
async function seedDemoData() {
  const api = async (method, path, body, token) => {
    const r = await fetch(`${BASE}${path}`, { method, headers: { "content-type": "application/json", ...(token ? { authorization: `JWT ${token}` } : {}) }, body: JSON.stringify(body) });
    if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${await r.text()}`);
    return r.json();
  };
  const { access_token: token } = await api("POST", `/${DEMO.slug}/auth`, { email: DEMO.email, password: DEMO.password });
  await fetch(`${BASE}/_operator/companies/${DEMO.slug}/users`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer dev-operator-token" },
    body: JSON.stringify({ usertype: "driver", email: "driver@demo.example", password: "demo-driver", firstname: "Dana", lastname: "Driver" }),
  });
  const places = [
    ["Café Lindner", 13.4188, 52.4986], ["Buchhandlung Kiez", 13.4326, 52.5451], ["Praxis Dr. Weber", 13.3298, 52.5047], ["Blumen Schulz", 13.4541, 52.5127],
    ["Bäckerei Hoffmann", 13.3777, 52.4871], ["Apotheke am Markt", 13.2871, 52.5368], ["Weinhandel Vogel", 13.4699, 52.4795], ["Atelier Braun", 13.4102, 52.5298],
    ["Schreinerei Koch", 13.3501, 52.5593], ["Feinkost Richter", 13.3142, 52.4788], ["Kanzlei Wolf", 13.3913, 52.5079], ["Optik Neumann", 13.4412, 52.4689],
  ];
  for (const [i, [name, lng, lat]] of places.entries()) {
    const address = await api("POST", `/${DEMO.slug}/api/address`, { contactcompany: name, city: "Berlin", country: "DE", lat, lng }, token);
    const start = 8 + (i % 4) * 2;
    const at = (h) => `${DEMO_DAY}T${String(h).padStart(2, "0")}:00:00${berlinOffset(DEMO_DAY, h)}`;
    await api("POST", `/${DEMO.slug}/api/delivery`, { deliverylocation_id: address.id, custom_id: `DEMO-${i + 1}`, pdt_from: at(start), pdt_to: at(start + 3), els: 5, load: 1 + (i % 3) }, token);
  }
}

/** The demo region's archive into the local bucket, unless the service already has a base map (an operator's extract, or raster tiles in .dev.vars). */
async function seedBaseMap() {
  const config = await (await fetch(`${BASE}/tiles/map.json`)).json();
  if (config.mode !== "none") return;
  const dir = mkdtempSync(join(tmpdir(), "dispatch-basemap-"));
  try {
    const file = join(dir, "demo.pmtiles");
    writeFileSync(file, await demoArchive());
    uploadBasemap(file, { quiet: true });
    console.log("  Base map: the made-up demo region (npm run operator -- upload-basemap --file <extract>.pmtiles replaces it)");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

waitForService()
  .then(seedBaseMap)
  .then(seedDemo)
  .catch((err) => {
    console.error(err.message);
    dev.kill();
    process.exit(1);
  });
