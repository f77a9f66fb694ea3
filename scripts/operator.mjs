#!/usr/bin/env node
/**
 * Operator CLI for local and deployed instances (wraps /_operator/*).
 *
 *   npm run operator -- create-company --slug acme --name "ACME GmbH" --email boss@acme.de --password '...' \
 *        [--street ... --housenumber ... --postalcode ... --city ... --country DE --lat 52.5 --lng 13.4] [--timezone Europe/Berlin]
 *   npm run operator -- add-user --slug acme --usertype driver|dispatcher|watcher --email d@acme.de --password '...' [--firstname .. --lastname ..]
 *   npm run operator -- outbox --slug acme [--page 1] [--q '{"filters":[...]}']
 *   npm run operator -- usage --slug acme   (rows per growing table, estimated D1 bytes, proofs and their images, archived driver-days in R2)
 *   npm run operator -- shards   (the D1 databases, companies on each, companies moving)
 *   npm run operator -- move-company --slug acme --shard 1   (copy, verify, switch, clean up: step after step until done; resumable)
 *   npm run operator -- import-areas --file plz.geojson [--replace]   (postal-code polygons: properties.plz|postcode|PLZ, optional note)
 *   npm run operator -- upload-basemap --file region.pmtiles [--remote] [--key basemap/region.pmtiles]   (the base map archive into R2; docs/features/base-map.md)
 *   npm run operator -- demo-basemap --file demo.pmtiles   (writes the made-up demo region's archive)
 *
 * Target: --url (or OPERATOR_URL, default http://127.0.0.1:8787); token: --token (or OPERATOR_TOKEN, default dev-operator-token).
 */
import { parseArgs } from "node:util";

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: Object.fromEntries(
    [
      ...["url", "token", "slug", "name", "email", "password", "firstname", "lastname", "usertype", "street", "housenumber", "postalcode", "city", "country", "lat", "lng", "timezone", "page", "q", "file", "shard", "key"].map((k) => [k, { type: "string" }]),
      ["replace", { type: "boolean" }],
      ["remote", { type: "boolean" }],
    ],
  ),
});

const url = (values.url ?? process.env.OPERATOR_URL ?? "http://127.0.0.1:8787").replace(/\/$/, "");
const token = values.token ?? process.env.OPERATOR_TOKEN ?? "dev-operator-token";

function need(...keys) {
  const missing = keys.filter((k) => !values[k]);
  if (missing.length) {
    console.error(`missing --${missing.join(", --")}`);
    process.exit(2);
  }
}

async function request(method, path, body) {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  console.log(text);
  if (!res.ok) process.exit(1);
}

const person = () => ({ ...(values.firstname ? { firstname: values.firstname } : {}), ...(values.lastname ? { lastname: values.lastname } : {}) });

switch (positionals[0]) {
  case "create-company": {
    need("slug", "name", "email", "password");
    const depotKeys = ["street", "housenumber", "postalcode", "city", "country"];
    const depot = Object.fromEntries(depotKeys.filter((k) => values[k]).map((k) => [k, values[k]]));
    if (values.lat && values.lng) Object.assign(depot, { lat: Number(values.lat), lng: Number(values.lng) });
    await request("POST", "/_operator/companies", {
      slug: values.slug,
      companyname: values.name,
      ...(values.timezone ? { timezone: values.timezone } : {}),
      ...(Object.keys(depot).length ? { depot } : {}),
      dispatcher: { email: values.email, password: values.password, ...person() },
    });
    break;
  }
  case "add-user":
    need("slug", "usertype", "email", "password");
    await request("POST", `/_operator/companies/${values.slug}/users`, { usertype: values.usertype, email: values.email, password: values.password, ...person() });
    break;
  case "outbox": {
    need("slug");
    const params = new URLSearchParams();
    if (values.page) params.set("page", values.page);
    if (values.q) params.set("q", values.q);
    await request("GET", `/_operator/companies/${values.slug}/outbox?${params}`);
    break;
  }
  case "usage":
    need("slug");
    await request("GET", `/_operator/companies/${values.slug}/usage`);
    break;
  case "shards":
    await request("GET", "/_operator/shards");
    break;
  case "move-company":
    need("slug", "shard");
    await moveCompany(values.slug, Number(values.shard));
    break;
  case "import-areas":
    need("file");
    await importAreas(values.file, values.replace === true);
    break;
  case "upload-basemap": {
    need("file");
    const { uploadBasemap } = await import("./basemap-upload.mjs");
    let info;
    try {
      info = uploadBasemap(values.file, { remote: values.remote, key: values.key });
    } catch (e) {
      console.error(e.message);
      process.exit(1);
    }
    console.log(`base map: zooms ${info.minzoom}–${info.maxzoom}, bounds ${info.bounds.join(", ")}, ${(info.bytes / 1e6).toFixed(1)} MB; the pages show it on their next load`);
    break;
  }
  case "demo-basemap": {
    need("file");
    const { writeFileSync } = await import("node:fs");
    const { demoArchive } = await import("./pmtiles-lib.mjs");
    writeFileSync(values.file, await demoArchive());
    console.log(`wrote ${values.file}`);
    break;
  }
  default:
    console.error("usage: npm run operator -- create-company|add-user|outbox|usage|shards|move-company|import-areas|upload-basemap|demo-basemap [options] (see scripts/operator.mjs)");
    process.exit(2);
}

/**
 * Sends a GeoJSON FeatureCollection of postal-code polygons to POST /_operator/postal-areas in requests below the
 * 5 MB body limit, all features of one postal code in the same request (an import supersedes earlier areas of its
 * codes), and `replace=true` only with the last request (so derived areas go once every imported one exists).
 */
async function importAreas(file, replace) {
  const { readFile } = await import("node:fs/promises");
  const collection = JSON.parse(await readFile(file, "utf8"));
  if (collection?.type !== "FeatureCollection" || !Array.isArray(collection.features)) {
    console.error(`${file} is not a GeoJSON FeatureCollection`);
    process.exit(2);
  }
  const byCode = new Map();
  for (const f of collection.features) {
    const p = f?.properties ?? {};
    const code = String(p.plz ?? p.postcode ?? p.PLZ ?? "").trim();
    const group = byCode.get(code) ?? { size: 0, features: [] };
    const text = JSON.stringify(f);
    group.features.push(text);
    group.size += text.length + 1;
    byCode.set(code, group);
  }
  const LIMIT = 4 * 1024 * 1024;
  const chunks = [];
  let current = { size: 0, features: [] };
  for (const group of byCode.values()) {
    if (current.features.length && current.size + group.size > LIMIT) {
      chunks.push(current);
      current = { size: 0, features: [] };
    }
    current.features.push(...group.features);
    current.size += group.size;
  }
  if (current.features.length) chunks.push(current);
  const total = { imported: 0, replaced: 0, kept: 0, tour_areas_updated: 0 };
  for (const [i, chunk] of chunks.entries()) {
    const last = i === chunks.length - 1;
    const res = await fetch(`${url}/_operator/postal-areas${replace && last ? "?replace=true" : ""}`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: `{"type":"FeatureCollection","features":[${chunk.features.join(",")}]}`,
    });
    const text = await res.text();
    if (!res.ok) {
      console.error(`request ${i + 1}/${chunks.length} failed: ${res.status} ${text}`);
      process.exit(1);
    }
    const result = JSON.parse(text);
    for (const k of ["imported", "replaced", "tour_areas_updated"]) total[k] += result[k] ?? 0;
    total.kept = result.kept ?? 0; // a state count: the last answer's is the final one
    console.error(`request ${i + 1}/${chunks.length}: ${text}`);
  }
  console.log(JSON.stringify(total));
}

/**
 * Moves a company to another shard (docs/operations/shards.md, the runbook): calls the step endpoint until the
 * move is done, waiting where it says; one line per step. Interrupted, the same command goes on where it stopped.
 */
async function moveCompany(slug, shard) {
  for (;;) {
    const res = await fetch(`${url}/_operator/companies/${slug}/move`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ shard }),
    });
    const text = await res.text();
    if (res.status === 503 || res.status >= 500) {
      console.error(`step failed (${res.status}), trying again in 5 s: ${text}`);
      await new Promise((r) => setTimeout(r, 5000));
      continue;
    }
    if (!res.ok) {
      console.error(text);
      process.exit(1);
    }
    const step = JSON.parse(text);
    console.error(`${step.phase}${step.table ? ` ${step.table}` : ""}: ${step.copied} rows copied, ${step.verified.length} tables verified${step.failures ? `, ${step.failures} verification(s) failed and redone` : ""}`);
    if (step.done) {
      console.log(text);
      return;
    }
    if (step.wait_seconds > 0) await new Promise((r) => setTimeout(r, Math.min(step.wait_seconds, 30) * 1000));
  }
}
