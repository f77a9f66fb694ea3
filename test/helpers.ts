/** Small fixtures for tests that go through the public HTTP interface. */
import { env } from "cloudflare:test";
import { exports } from "cloudflare:workers";

export const ORIGIN = "http://dispatch.test";
export const OPERATOR = { Authorization: `Bearer ${env.OPERATOR_TOKEN}` };

export interface CallOptions {
  body?: unknown;
  token?: string;
  headers?: Record<string, string>;
  /** Raw body text (for malformed JSON). */
  raw?: string;
}

export async function call(method: string, path: string, opts: CallOptions = {}) {
  const headers: Record<string, string> = { ...opts.headers };
  // The operator's paths are limited per client address: the suites' set-up (hundreds of companies) comes from many.
  if (path.startsWith("/_operator/") && !headers["CF-Connecting-IP"]) headers["CF-Connecting-IP"] = `198.18.${Math.floor(Math.random() * 256)}.${Math.floor(Math.random() * 256)}`;
  if (opts.token) headers.Authorization = `JWT ${opts.token}`;
  let body: string | undefined = opts.raw;
  if (opts.body !== undefined) {
    headers["content-type"] = "application/json";
    body = JSON.stringify(opts.body);
  } else if (opts.raw !== undefined) headers["content-type"] = "application/json";
  const response = await exports.default.fetch(new Request(`${ORIGIN}${path}`, { method, headers, body }));
  const text = await response.text();
  let json: any = undefined;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: response.status, body: json, text, headers: response.headers };
}

export interface TestCompany {
  slug: string;
  id: number;
  dispatcher: { email: string; password: string; token: string };
  /** Calls `/<slug>/api<path>` as the dispatcher (or with `token`). */
  api: (method: string, path: string, opts?: CallOptions) => ReturnType<typeof call>;
  /** Creates a confirmed user through the operator API and logs it in. */
  user: (usertype: "dispatcher" | "watcher" | "driver", email?: string) => Promise<{ id: number; token: string; code?: string; email: string }>;
  /** The D1 database of the company's shard (`extra.shard` of createCompany; the first database by default). */
  d1: D1Database;
}

let counter = 0;

export async function login(slug: string, email: string, password: string): Promise<string> {
  const res = await call("POST", `/${slug}/auth`, { body: { email, password } });
  if (res.status !== 200) throw new Error(`login failed: ${res.status} ${res.text}`);
  return res.body.access_token;
}

/** A fresh company with a depot in Berlin Mitte and a logged-in dispatcher. */
export async function createCompany(slug = `co-${++counter}-${Math.random().toString(36).slice(2, 7)}`, extra: Record<string, unknown> = {}): Promise<TestCompany> {
  const dispatcher = { email: `boss@${slug}.example`, password: "correct horse battery" };
  const res = await call("POST", "/_operator/companies", {
    headers: OPERATOR,
    body: {
      slug,
      companyname: `Company ${slug}`,
      depot: { street: "Invalidenstraße", housenumber: "117", postalcode: "10115", city: "Berlin", country: "DE", lat: 52.5317, lng: 13.3849 },
      dispatcher,
      ...extra,
    },
  });
  if (res.status !== 201) throw new Error(`company creation failed: ${res.status} ${res.text}`);
  const token = await login(slug, dispatcher.email, dispatcher.password);
  const company: TestCompany = {
    slug,
    id: res.body.id,
    d1: extra.shard === 1 ? env.DB_SHARD_1! : env.DB,
    dispatcher: { ...dispatcher, token },
    api: (method, path, opts = {}) => call(method, `/${slug}/api${path}`, { token, ...opts }),
    user: async (usertype, email = `${usertype}-${++counter}@${slug}.example`) => {
      const password = "another good password";
      const created = await call("POST", `/_operator/companies/${slug}/users`, { headers: OPERATOR, body: { usertype, email, password } });
      if (created.status !== 201) throw new Error(`user creation failed: ${created.status} ${created.text}`);
      return { id: created.body.id, token: await login(slug, email, password), code: created.body.code, email };
    },
  };
  return company;
}

/** Fixture: an address row of the company at a coordinate (setup only; address endpoints are tested on their own). */
export async function insertAddress(companyId: number, fields: { lng: number; lat: number; city?: string; postalcode?: string; contactcompany?: string }, d1: D1Database = env.DB) {
  const row = await d1.prepare(
    "INSERT INTO addresses (company_id, lng, lat, city, postalcode, country, contactcompany, geocode_source) VALUES (?, ?, ?, ?, ?, 'DE', ?, 'input') RETURNING id",
  )
    .bind(companyId, fields.lng, fields.lat, fields.city ?? "Berlin", fields.postalcode ?? null, fields.contactcompany ?? null)
    .first<{ id: number }>();
  return row!.id;
}

/** Tomorrow (UTC) at hh:mm, as the API answers date-times. */
export function tomorrowAt(h: number, m = 0): string {
  const d = new Date();
  d.setUTCDate(d.getUTCDate() + 1);
  d.setUTCHours(h, m, 0, 0);
  return d.toISOString().replace(".000Z", "Z");
}

/**
 * Routes the deliveries (and any new ones of `deliverydata`; `routing`: more of the routing body) onto one tour and
 * drives it to "on the way": an active driver is assigned, accepts and starts. Returns the start's answer and the plan.
 */
export async function routeAndStart(co: TestCompany, deliveryIds: number[], deliverydata?: Record<string, unknown>[], routing: Record<string, unknown> = {}) {
  const driver = await co.user("driver");
  await co.d1.prepare("UPDATE users SET active = 1 WHERE id = ?").bind(driver.id).run();
  const routed = await co.api("POST", "/calcroute/optimized/timewindow?async=false&num_vehicles=1", { body: { deliveryids: deliveryIds, ...(deliverydata ? { deliverydata } : {}), ...routing } });
  if (routed.status !== 200) throw new Error(`routing failed: ${routed.status} ${routed.text}`);
  const routeId: number = routed.body.objects[0].id;
  await co.api("PATCH", `/route/${routeId}`, { body: { driver_id: driver.id } });
  await co.api("POST", `/setroutestatus/${routeId}`, { token: driver.token, body: { status: 2 } });
  const started = await co.api("PATCH", `/route/${routeId}`, { token: driver.token, body: { status: 3 } });
  if (started.status !== 200) throw new Error(`start failed: ${started.status} ${started.text}`);
  return { driver, routeId, started, planned: routed.body.objects[0] };
}

/** Polls `probe` every 100 ms until it answers something (at most 15 s). */
export async function until<T>(probe: () => Promise<T | undefined>, what: string): Promise<T> {
  for (let i = 0; i < 150; i++) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}
