/**
 * Fuzz suite generated from `/openapi.json`: for every operation, requests
 * valid and invalid by construction (fast-check, fixed seed), sent as
 * dispatcher, watcher, driver, another company's dispatcher and without a
 * token. Every answer: no 5xx; a 4xx carries `{code, message, fields}`; a
 * request invalid by construction never gets a 2xx; and a refused request
 * leaves the data unchanged (counts plus a sample of records).
 *
 * `npm run fuzz -- --runs N [--seed S]` runs N requests of each kind per operation (default 2 in the suite).
 */
import { env } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { BAD_Q, type Doc, HOSTILE_FTS, HOSTILE_Q, type Mutated, SchemaTools, type Schema, deepNest, isRecord } from "./fuzz-gen";
import { OPERATOR, ORIGIN, type TestCompany, call, createCompany, insertAddress, tomorrowAt } from "./helpers";

const RUNS = Number(env.FUZZ_RUNS) || 2;
const SEED = Number(env.FUZZ_SEED) || 20261125;

type Actor = "dispatcher" | "watcher" | "driver" | "other" | "none" | "operator";

interface FuzzRequest {
  method: string;
  path: string;
  actor: Actor;
  body?: { raw: string; type: string } | { form: FormData };
  /** Why the request must be refused; null when it is valid by construction. */
  invalid: string | null;
}

/** POSTs that change nothing a watcher may not: the live channel's ticket (watchers watch). */
const READS_BY_POST = new Set(["POST /{slug}/api/ws/ticket"]);

/** Operations whose valid requests start background work or replace reference data: only invalid requests are sent. */
const INVALID_ONLY = new Set([
  "POST /{slug}/api/calcroute/optimized/timewindow",
  "PATCH /{slug}/api/calcroute/update/timewindow/{route_id}",
  "POST /{slug}/api/routingvariants",
  "POST /{slug}/api/upload/onestep",
  "POST /{slug}/api/batchrouting/{process_id}",
  "POST /_operator/postal-areas",
  // Moves the company to another shard (read-only meanwhile): tested in test/shards.test.ts.
  "POST /_operator/companies/{slug}/move",
  "GET /{slug}/api/ws",
]);

/** Tables of the snapshot: row count, highest id and the newest rows. */
const TABLES = ["companies", "users", "addresses", "deliveries", "routes", "vehicles", "driver_availabilities", "driver_tracking", "tour_areas", "tour_area_members", "processes"];

interface World {
  a: TestCompany;
  b: TestCompany;
  tokens: Record<Exclude<Actor, "none" | "operator">, string>;
  /** Path parameter values of existing objects of company A, and of company B (another tenant's ids must be unknown). */
  ids: Record<string, string>;
  foreignIds: Record<string, string>;
  /** The seeded rows of A, compared in every snapshot. */
  seeded: Record<string, number[]>;
}

async function seed(): Promise<World> {
  const [a, b] = [await createCompany(), await createCompany()];
  const seedCompany = async (co: TestCompany) => {
    const driver = await co.user("driver");
    await env.DB.prepare("UPDATE users SET active = 1 WHERE id = ?").bind(driver.id).run();
    const addresses = [await insertAddress(co.id, { lng: 13.42, lat: 52.5 }), await insertAddress(co.id, { lng: 13.45, lat: 52.52, postalcode: "10115" })];
    const deliveries: number[] = [];
    for (const address of addresses) {
      const d = await co.api("POST", "/delivery", { body: { deliverylocation_id: address, pdt_from: tomorrowAt(8), pdt_to: tomorrowAt(18), els: 5 } });
      deliveries.push(d.body.id);
    }
    const routed = await co.api("POST", "/calcroute/optimized/timewindow?async=false&num_vehicles=1", { body: { deliveryids: deliveries } });
    if (routed.status !== 200) throw new Error(`routing failed: ${routed.text}`);
    const open = await co.api("POST", "/delivery", { body: { deliverylocation_id: addresses[0], pdt_from: tomorrowAt(9), pdt_to: tomorrowAt(12) } });
    const vehicle = await co.api("POST", "/vehicle", { body: { name: "Van 1", driver_id: driver.id } });
    const window = await co.api("POST", "/driveravailability", { body: { driver_id: driver.id, fromtime: tomorrowAt(6), totime: tomorrowAt(20) } });
    const track = await co.api("POST", "/drivertracking", { token: driver.token, body: { position: { type: "Point", coordinates: [13.4, 52.5] } } });
    const area = await co.api("POST", "/areafromplz", { body: { plz_list: ["10115"], areaname: "Mitte" } });
    const form = new FormData();
    form.append("file[]", new File(["PLZ;Ort\n10115;Berlin\n"], "rows.csv"));
    const upload = await exports.default.fetch(new Request(`${ORIGIN}/${co.slug}/api/upload/deliveryonly`, { method: "POST", headers: { Authorization: `JWT ${co.dispatcher.token}` }, body: form }));
    const { process_id } = await upload.json<{ process_id: string }>();
    for (const r of [open, vehicle, window, track, area]) if (r.status >= 300) throw new Error(`seeding failed: ${r.text}`);
    const ids = {
      driver_id: String(driver.id),
      dispatcher_id: String((await co.api("GET", "/dispatcher")).body.objects[0].id),
      address_id: String(addresses[0]),
      delivery_id: String(open.body.id),
      route_id: String(routed.body.objects[0].id),
      vehicle_id: String(vehicle.body.id),
      driveravailability_id: String(window.body.id),
      drivertracking_id: String((Array.isArray(track.body) ? track.body[0] : track.body.objects?.[0] ?? track.body).id),
      tourarea_id: String(area.body.id),
      process_id,
      action: "final",
    };
    return { driver, ids, rows: { users: [driver.id], addresses, deliveries: [...deliveries, open.body.id], routes: [routed.body.objects[0].id], vehicles: [vehicle.body.id], tour_areas: [area.body.id] } };
  };
  const sa = await seedCompany(a);
  const sb = await seedCompany(b);
  const watcher = await a.user("watcher");
  return {
    a,
    b,
    tokens: { dispatcher: a.dispatcher.token, watcher: watcher.token, driver: sa.driver.token, other: b.dispatcher.token },
    ids: sa.ids,
    foreignIds: sb.ids,
    seeded: sa.rows,
  };
}

/**
 * The data snapshot as ONE query (it runs around every request): per table the row count, the
 * highest rowid, the newest rows and the seeded rows of company A, every column quoted.
 */
async function snapshotQuery(world: World): Promise<D1PreparedStatement> {
  const parts: string[] = [];
  for (const t of TABLES) {
    const columns = (await env.DB.prepare("SELECT name FROM pragma_table_info(?)").bind(t).all<{ name: string }>()).results.map((c) => `quote("${c.name}")`);
    const row = `json_array(${columns.join(", ")})`;
    parts.push(`(SELECT json_array(count(*), max(rowid)) FROM ${t})`);
    parts.push(`(SELECT json_group_array(${row}) FROM (SELECT * FROM ${t} ORDER BY rowid DESC LIMIT 3))`);
    if (world.seeded[t]) parts.push(`(SELECT json_group_array(${row}) FROM (SELECT * FROM ${t} WHERE id IN (${world.seeded[t].join(",")}) ORDER BY id))`);
  }
  return env.DB.prepare(`SELECT json_array(${parts.join(", ")}) AS snapshot`);
}

const isApi = (path: string) => path.startsWith("/{slug}/api/");

function headersFor(actor: Actor, world: World): Record<string, string> {
  if (actor === "none") return {};
  if (actor === "operator") return OPERATOR;
  return { Authorization: `JWT ${world.tokens[actor]}` };
}

/** Every request of one operation: valid ones (unless INVALID_ONLY) and invalid ones, in several roles. */
function requestsFor(tools: SchemaTools, world: World, key: string, op: Schema, runs: number, seed: number): FuzzRequest[] {
  const [method, template] = key.split(" ");
  const params: Schema[] = (op.parameters ?? []).filter((p: Schema) => p.name !== "slug" || !template.startsWith("/{slug}"));
  const pathParams = params.filter((p) => p.in === "path");
  const queryParams = params.filter((p) => p.in === "query");
  const content = op.requestBody?.content ?? {};
  const jsonSchema: Schema | undefined = content["application/json"]?.schema;
  const multipart = "multipart/form-data" in content;
  const operatorPath = template.startsWith("/_operator");
  const slugOnly = !operatorPath && !isApi(template);
  const validActor: Actor = operatorPath ? "operator" : slugOnly ? "none" : "dispatcher";
  const sample = <T>(arb: fc.Arbitrary<T>, n = runs, k = 0) => fc.sample(arb, { seed: seed + k, numRuns: n });

  const fillPath = (overrides: Record<string, string> = {}) =>
    template.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(overrides[name] ?? (name === "slug" ? world.a.slug : world.ids[name] ?? "1")));
  const queryString = (values: Record<string, unknown>) => {
    const entries = Object.entries(values).filter(([, v]) => v !== undefined);
    // Lone surrogates cannot travel in a URL; they are replaced (they stay in JSON bodies).
    const encode = (v: string) => encodeURIComponent(v.replace(/[\ud800-\udfff]/g, (ch, i, all) => (/[\ud800-\udbff][\udc00-\udfff]/.test(all.slice(i - 1, i + 1) + all.slice(i, i + 2)) ? ch : "\ufffd")));
    return entries.length ? `?${entries.map(([k, v]) => `${encode(k)}=${encode(typeof v === "string" ? v : JSON.stringify(v))}`).join("&")}` : "";
  };
  const validQuery: fc.Arbitrary<Record<string, string | undefined>> = fc.record(
    Object.fromEntries<fc.Arbitrary<string>>(
      queryParams.map((p) => {
        if (p.name === "q") return [p.name, fc.constantFrom('{"filters":[{"name":"id","op":">","val":0}]}', '{"order_by":[{"field":"id","direction":"desc"}],"limit":5}')];
        return [p.name, tools.valid(p.schema).map((v) => (typeof v === "string" ? v : JSON.stringify(v)))];
      }),
    ),
    { requiredKeys: queryParams.filter((p) => p.required).map((p) => p.name) as never[] },
  );
  const validBody = jsonSchema ? tools.valid(jsonSchema) : fc.constant(undefined);
  const json = (value: unknown) => ({ raw: JSON.stringify(value), type: "application/json" });
  const out: FuzzRequest[] = [];

  // Valid by construction, as every role (watchers may only read; other tenants and missing tokens are refused).
  const valids = sample(fc.tuple(validQuery, validBody));
  valids.forEach(([query, body], i) => {
    const base = { method, path: fillPath() + queryString(query), body: body === undefined ? undefined : json(body) };
    if (multipart) {
      const form = new FormData();
      form.append("file[]", new File([`PLZ;Ort;notes\n10115;Berlin;row ${i}\n`], `fuzz-${i}.csv`));
      Object.assign(base, { body: { form } });
    }
    if (!INVALID_ONLY.has(key)) {
      const actors: Actor[] = operatorPath || slugOnly ? [validActor] : ["dispatcher", "watcher", "driver"];
      const actor = actors[i % actors.length];
      out.push({ ...base, actor, invalid: actor === "watcher" && method !== "GET" && !READS_BY_POST.has(key) ? "watchers only read" : null });
    }
    if (!slugOnly) out.push({ ...base, actor: operatorPath ? "dispatcher" : i % 2 ? "other" : "none", invalid: operatorPath ? "no operator token" : i % 2 ? "token of another company" : "no token" });
  });

  // Invalid by construction: broken bodies.
  if (jsonSchema) {
    for (const [k, body] of sample(validBody, runs, 1).entries()) {
      const mutations: Mutated[] = isRecord(body) ? tools.mutations(jsonSchema, body) : [];
      const bodyTypes = tools.types(jsonSchema);
      if (bodyTypes && !bodyTypes.has("array")) mutations.push({ value: [], why: "body is an array" }, { value: deepNest(3000), why: "deeply nested body" });
      if (bodyTypes && !bodyTypes.has("string")) mutations.push({ value: "text", why: "body is a string" });
      if (bodyTypes && !bodyTypes.has("null")) mutations.push({ value: null, why: "body is null" });
      const picked = sample(fc.constantFrom(...mutations), Math.min(mutations.length, runs * 4), 2 + k);
      for (const m of picked) out.push({ method, path: fillPath(), actor: validActor, body: json(m.value), invalid: m.why });
      out.push({ method, path: fillPath(), actor: validActor, body: { raw: JSON.stringify(body).slice(0, -1) || "{", type: "application/json" }, invalid: "broken JSON" });
      out.push({ method, path: fillPath(), actor: validActor, body: { raw: JSON.stringify(body), type: "text/plain" }, invalid: "wrong content type" });
      out.push({ method, path: fillPath(), actor: validActor, invalid: "no body" });
    }
  }
  if (multipart) {
    out.push({ method, path: fillPath(), actor: validActor, body: json({ file: "x" }), invalid: "JSON instead of a form" });
    out.push({ method, path: fillPath(), actor: validActor, body: { form: new FormData() }, invalid: "form without file" });
  }

  // Invalid by construction: bad path parameters (malformed, unknown, another company's).
  for (const p of pathParams) {
    const bad = p.schema?.type === "integer" ? ["0", "-1", "abc", "1.5", "NaN", "Infinity", "99999999999999999999999", "' OR 1=1 --", "2147483647"] : ["abc", "00000000-0000-4000-8000-000000000000", "../../x"];
    const foreign = world.foreignIds[p.name];
    const candidates = foreign && p.name !== "action" ? [...bad, foreign] : bad;
    for (const value of sample(fc.constantFrom(...candidates), runs * 2, 3)) {
      out.push({ method, path: fillPath({ [p.name]: value }), actor: validActor, body: jsonSchema ? json(sample(validBody, 1, 4)[0]) : undefined, invalid: `path ${p.name}=${value}` });
    }
  }

  // Query parameters: rule-breaking values must be refused; hostile q and FTS expressions must not break anything.
  for (const p of queryParams) {
    const baseQuery = sample(validQuery, 1, 5)[0];
    const body = jsonSchema ? json(sample(validBody, 1, 6)[0]) : undefined;
    const send = (value: string, invalid: string | null) =>
      out.push({ method, path: fillPath() + queryString({ ...baseQuery, [p.name]: value }), actor: validActor, body, invalid });
    if (p.name === "q") {
      for (const q of sample(fc.constantFrom(...BAD_Q), runs * 2, 7)) send(q, `bad q ${q.slice(0, 40)}`);
      for (const q of sample(fc.constantFrom(...HOSTILE_Q), runs * 2, 8)) send(q, null);
      continue;
    }
    if (p.name === "query") for (const q of sample(fc.constantFrom(...HOSTILE_FTS), runs * 2, 9)) send(q, null);
    const breaking = tools
      .breaking(p.schema)
      .filter((m) => typeof m.value !== "object" && typeof m.value !== "boolean")
      .map((m) => ({ value: String(m.value), why: m.why }));
    const type = tools.deref(p.schema).type;
    if (type === "integer" || type === "number" || (Array.isArray(type) && type.includes("integer"))) breaking.push({ value: "abc", why: "not a number" }, { value: "", why: "empty number" });
    if (type === "boolean") breaking.push({ value: "maybe", why: "not a boolean" });
    if (tools.deref(p.schema).enum) breaking.push({ value: "fuzz-no-such-value", why: "not in enum" });
    // Numbers as query strings: a wrong "type" 12345 is a fine string, so only range and format breaks count.
    const usable = breaking.filter((m) => !(type === "string" && m.why.startsWith("wrong type")));
    if (usable.length) for (const m of sample(fc.constantFrom(...usable), Math.min(usable.length, runs * 2), 10)) send(m.value, `query ${p.name}: ${m.why}`);
  }
  return out;
}

async function send(req: FuzzRequest, world: World) {
  const headers: Record<string, string> = headersFor(req.actor, world);
  let body: BodyInit | undefined;
  if (req.body && "form" in req.body) body = req.body.form;
  else if (req.body) {
    headers["content-type"] = req.body.type;
    body = req.body.raw;
  }
  const path = req.path.replace("{slug}", world.a.slug);
  const response = await exports.default.fetch(new Request(`${ORIGIN}${path}`, { method: req.method, headers, body }));
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, text, json };
}

describe("fuzz: every operation of /openapi.json", () => {
  let world: World;
  let doc: Doc;
  beforeAll(async () => {
    world = await seed();
    doc = (await call("GET", "/openapi.json")).body;
  }, 60_000);

  it(`answers ${RUNS} runs of valid and invalid requests per operation without a 5xx, with the error shape, and without changes on refusals`, { timeout: 100_000 + RUNS * 60_000 }, async () => {
    const tools = new SchemaTools(doc);
    // The document states the strictness the unknown-field mutations rely on.
    expect(tools.deref(doc.paths["/{slug}/api/driver"].post.requestBody.content["application/json"].schema).additionalProperties).toBe(false);
    const query = await snapshotQuery(world);
    const snapshot = async (): Promise<string> => (await query.first<{ snapshot: string }>())!.snapshot;
    // After a refusal the data is unchanged, so its snapshot is the next request's "before".
    let known: string | null = null;
    const failures: string[] = [];
    const figures = { requests: 0, invalid: 0, refused: 0, serverErrors: 0, operations: 0 };
    for (const [template, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        const key = `${method.toUpperCase()} ${template}`;
        figures.operations++;
        for (const req of requestsFor(tools, world, key, op, RUNS, SEED)) {
          const before: string = known ?? (await snapshot());
          known = null;
          const res = await send(req, world);
          figures.requests++;
          if (req.invalid) figures.invalid++;
          const where = `${req.method} ${req.path.slice(0, 160)} as ${req.actor} (${req.invalid ?? "valid"}): ${res.status} ${res.text.slice(0, 200)}`;
          if (res.status >= 500) {
            figures.serverErrors++;
            failures.push(`5xx: ${where}`);
            continue;
          }
          if (res.status >= 400) {
            figures.refused++;
            const shape = res.json as { code?: unknown; message?: unknown; fields?: unknown } | undefined;
            if (!(shape && shape.code === res.status && typeof shape.message === "string" && typeof shape.fields === "string")) failures.push(`error shape: ${where}`);
            known = await snapshot();
            if (known !== before) failures.push(`data changed on a refusal: ${where}`);
          } else if (req.invalid) failures.push(`accepted: ${where}`);
        }
      }
    }
    console.log(`fuzz figures (seed ${SEED}, runs ${RUNS}): ${JSON.stringify(figures)}`);
    expect(failures.slice(0, 40), `${failures.length} failures`).toEqual([]);
    expect(figures.operations).toBe(Object.values(doc.paths).reduce((n, item) => n + Object.keys(item).length, 0));
  });
});
