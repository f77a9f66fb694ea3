#!/usr/bin/env node
/**
 * Local service in one command: secrets from .dev.vars.example, D1 migrations
 * applied to the local database, `wrangler dev` on http://127.0.0.1:8787,
 * and the demo company seeded through the operator API.
 */
import { spawn, spawnSync } from "node:child_process";
import { copyFileSync, existsSync } from "node:fs";

const PORT = process.env.PORT ?? "8787";
const BASE = `http://127.0.0.1:${PORT}`;
const DEMO = { slug: "demo", email: "dispatcher@demo.example", password: "demo-dispatcher" };

if (!existsSync(".dev.vars")) copyFileSync(".dev.vars.example", ".dev.vars");

const migrate = spawnSync("npx", ["wrangler", "d1", "migrations", "apply", "DB", "--local"], { stdio: "inherit", env: { ...process.env, CI: "true" } });
if (migrate.status !== 0) process.exit(migrate.status ?? 1);

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
  console.log(`
  Dispatch service running at ${BASE}
  API reference:   ${BASE}/docs   (OpenAPI: ${BASE}/openapi.json)
  Demo company:    ${BASE}/${DEMO.slug}
  Dispatcher:      ${DEMO.email} / ${DEMO.password}
  Token:           curl -s -X POST ${BASE}/${DEMO.slug}/auth -H 'content-type: application/json' -d '{"email":"${DEMO.email}","password":"${DEMO.password}"}'
  Operator token:  dev-operator-token
`);
}

waitForService()
  .then(seedDemo)
  .catch((err) => {
    console.error(err.message);
    dev.kill();
    process.exit(1);
  });
