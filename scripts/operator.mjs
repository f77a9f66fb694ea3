#!/usr/bin/env node
/**
 * Operator CLI for local and deployed instances (wraps /_operator/*).
 *
 *   npm run operator -- create-company --slug acme --name "ACME GmbH" --email boss@acme.de --password '...' \
 *        [--street ... --housenumber ... --postalcode ... --city ... --country DE --lat 52.5 --lng 13.4] [--timezone Europe/Berlin]
 *   npm run operator -- add-user --slug acme --usertype driver|dispatcher|watcher --email d@acme.de --password '...' [--firstname .. --lastname ..]
 *   npm run operator -- outbox --slug acme [--page 1] [--q '{"filters":[...]}']
 *
 * Target: --url (or OPERATOR_URL, default http://127.0.0.1:8787); token: --token (or OPERATOR_TOKEN, default dev-operator-token).
 */
import { parseArgs } from "node:util";

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: Object.fromEntries(
    ["url", "token", "slug", "name", "email", "password", "firstname", "lastname", "usertype", "street", "housenumber", "postalcode", "city", "country", "lat", "lng", "timezone", "page", "q"].map((k) => [k, { type: "string" }]),
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
  default:
    console.error("usage: npm run operator -- create-company|add-user|outbox [options] (see scripts/operator.mjs)");
    process.exit(2);
}
