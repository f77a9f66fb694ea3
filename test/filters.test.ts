import { SQLiteSyncDialect } from "drizzle-orm/sqlite-core";
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { deliveries, routes, users } from "../src/core/db/schema";
import { ApiError } from "../src/core/errors";
import { type FieldMap, compileQuery, likeToGlob } from "../src/core/lib/filters";
import { type TestCompany, createCompany } from "./helpers";

const fields: FieldMap = {
  id: { column: routes.id, type: "integer" },
  status: { column: routes.status, type: "integer" },
  custom_id: { column: routes.custom_id, type: "text" },
  ast: { column: routes.ast, type: "datetime" },
  distance: { column: routes.distance, type: "integer" },
  gross_duration: { column: routes.gross_duration, type: "integer" },
  previous_drivers: { column: routes.previous_drivers, type: "json_array" },
  deliveries: {
    relation: "many",
    fields: { status: { column: deliveries.status, type: "integer" } },
    exists: (condition) => sql`exists (select 1 from ${deliveries} where ${deliveries.route_id} = ${routes.id} and ${condition})`,
  },
};

const dialect = new SQLiteSyncDialect();
const where = (q: unknown) => {
  const compiled = compileQuery(JSON.stringify(q), fields);
  if (!compiled.where) return { sql: "", params: [] as unknown[] };
  const { sql: text, params } = dialect.sqlToQuery(compiled.where);
  return { sql: text, params };
};
const filter = (f: unknown) => where({ filters: [f] });
const rejects = (q: unknown, field: string) => {
  try {
    compileQuery(typeof q === "string" ? q : JSON.stringify(q), fields);
  } catch (e) {
    expect(e).toBeInstanceOf(ApiError);
    expect((e as ApiError).status).toBe(422);
    expect((e as ApiError).fields).toBe(field);
    return;
  }
  throw new Error("expected a 422");
};

describe("q compiler: operators", () => {
  it.each([
    ["==", "="], ["eq", "="], ["equals", "="], ["equal_to", "="],
    ["!=", "<>"], ["neq", "<>"], ["does_not_equal", "<>"], ["not_equal_to", "<>"],
    [">", ">"], ["gt", ">"], ["<", "<"], ["lt", "<"],
    [">=", ">="], ["ge", ">="], ["gte", ">="], ["geq", ">="],
    ["<=", "<="], ["le", "<="], ["lte", "<="], ["leq", "<="],
  ])("%s compiles to %s with a bound value", (op, sqlOp) => {
    expect(filter({ name: "status", op, val: 2 })).toEqual({ sql: `"routes"."status" ${sqlOp} ?`, params: [2] });
  });

  it("in / not_in bind the list as one JSON parameter (D1 binds at most 100 values)", () => {
    expect(filter({ name: "status", op: "in", val: [1, "2"] })).toEqual({ sql: `"routes"."status" in (select value from json_each(?))`, params: ["[1,2]"] });
    expect(filter({ name: "status", op: "not_in", val: [3, 4] })).toEqual({ sql: `not ("routes"."status" in (select value from json_each(?)))`, params: ["[3,4]"] });
    // One value is an equality, which SQLite plans on an index reliably.
    expect(filter({ name: "status", op: "not_in", val: [3] })).toEqual({ sql: `not ("routes"."status" = ?)`, params: [3] });
    expect(filter({ name: "status", op: "in", val: [] }).sql).toBe("0 = 1");
  });

  it("is_null / is_not_null need no value", () => {
    expect(filter({ name: "ast", op: "is_null" }).sql).toBe(`"routes"."ast" is null`);
    expect(filter({ name: "ast", op: "is_not_null" }).sql).toBe(`"routes"."ast" is not null`);
    expect(filter({ name: "ast", op: "==", val: null }).sql).toBe(`"routes"."ast" is null`);
  });

  it("like is case-sensitive (GLOB), ilike is not", () => {
    expect(filter({ name: "custom_id", op: "like", val: "Tour%_1" })).toEqual({ sql: `"routes"."custom_id" glob ?`, params: ["Tour*?1"] });
    expect(filter({ name: "custom_id", op: "ilike", val: "tour%" })).toEqual({ sql: `lower("routes"."custom_id") like lower(?) escape '\\'`, params: ["tour%"] });
    expect(likeToGlob("a*b?[c]\\%")).toBe("a[*]b[?][[]c]%");
  });

  it("any on a list column tests membership; any on a relation filters related rows", () => {
    expect(filter({ name: "previous_drivers", op: "any", val: 7 })).toEqual({
      sql: `exists (select 1 from json_each("routes"."previous_drivers") where json_each.value = ?)`,
      params: [7],
    });
    const rel = filter({ name: "deliveries", op: "any", val: { name: "status", op: "==", val: 2 } });
    expect(rel.sql).toBe(`exists (select 1 from "deliveries" where "deliveries"."route_id" = "routes"."id" and "deliveries"."status" = ?)`);
    expect(rel.params).toEqual([2]);
  });

  it("compares two fields", () => {
    expect(filter({ name: "distance", op: ">", field: "gross_duration" }).sql).toBe(`"routes"."distance" > "routes"."gross_duration"`);
  });

  it("normalises date-time values to UTC", () => {
    expect(filter({ name: "ast", op: ">=", val: "2026-11-23T10:00:00+01:00" }).params).toEqual(["2026-11-23T09:00:00Z"]);
    expect(filter({ name: "ast", op: ">=", val: "2026-11-23T10:00:00" }).params).toEqual(["2026-11-23T10:00:00Z"]);
  });

  it("nests or / and", () => {
    const q = where({ filters: [{ or: [{ name: "status", op: "==", val: 1 }, { and: [{ name: "status", op: "==", val: 2 }, { name: "distance", op: "<", val: 1000 }] }] }] });
    expect(q.sql).toBe(`("routes"."status" = ? or ("routes"."status" = ? and "routes"."distance" < ?))`);
    expect(q.params).toEqual([1, 2, 1000]);
  });

  it("order_by, limit, offset, single", () => {
    const compiled = compileQuery(JSON.stringify({ order_by: [{ field: "distance", direction: "desc" }, { field: "id" }], limit: 5, offset: 2, single: true }), fields);
    expect(compiled.orderBy.map((o) => dialect.sqlToQuery(o).sql)).toEqual([`"routes"."distance" desc`, `"routes"."id" asc`]);
    expect(compiled).toMatchObject({ limit: 5, offset: 2, single: true });
  });
});

describe("q compiler: rejections (422 naming the field)", () => {
  it("malformed JSON", () => rejects("{filters: [", "q"));
  it("not an object", () => rejects("[1,2]", "q"));
  it("unknown field", () => rejects({ filters: [{ name: "password_hash", op: "==", val: "x" }] }, "password_hash"));
  it("unknown operator", () => rejects({ filters: [{ name: "status", op: "~~", val: 1 }] }, "status"));
  it("wrong value type", () => rejects({ filters: [{ name: "status", op: "==", val: "two" }] }, "status"));
  it("invalid date-time", () => rejects({ filters: [{ name: "ast", op: ">", val: "yesterday" }] }, "ast"));
  it("in without an array", () => rejects({ filters: [{ name: "status", op: "in", val: 1 }] }, "status"));
  it("unknown order field", () => rejects({ order_by: [{ field: "secret", direction: "asc" }] }, "secret"));
  it("bad direction", () => rejects({ order_by: [{ field: "id", direction: "sideways" }] }, "id"));
  it("negative limit", () => rejects({ limit: -1 }, "limit"));
  it("relation without any", () => rejects({ filters: [{ name: "deliveries", op: "==", val: 1 }] }, "deliveries"));
  it("comparison with an unknown second field", () => rejects({ filters: [{ name: "distance", op: ">", field: "nope" }] }, "nope"));
  it("more compared values than a statement can bind", () => rejects({ filters: Array.from({ length: 61 }, (_, i) => ({ name: "id", op: "!=", val: i })) }, "id"));
  it("filters nested too deeply", () => rejects({ filters: [Array.from({ length: 11 }).reduce((f) => ({ or: [f] }), { name: "id", op: ">", val: 0 })] }, "q"));
  it("prototype keys are not fields", () => rejects({ filters: [{ name: "constructor", op: "==", val: 1 }] }, "constructor"));
});

describe("lists over HTTP", () => {
  let co: TestCompany;
  beforeAll(async () => {
    co = await createCompany();
    for (const [first, last] of [["Anna", "Zimmer"], ["Bert", "Young"], ["Carl", "Xavier"]]) {
      const res = await co.api("POST", "/adduser/dispatcher", { body: { firstname: first, lastname: last, email: `${first.toLowerCase()}@example.com` } });
      expect(res.status).toBe(201);
    }
  });
  const list = (q?: unknown, extra = "") => co.api("GET", `/dispatcher?${q ? `q=${encodeURIComponent(JSON.stringify(q))}` : ""}${extra}`);

  it("pages with the envelope", async () => {
    const page1 = await list(undefined, "&results_per_page=3");
    expect(page1.body).toMatchObject({ num_results: 4, page: 1, total_pages: 2 });
    expect(page1.body.objects).toHaveLength(3);
    const page2 = await list(undefined, "&results_per_page=3&page=2");
    expect(page2.body.objects).toHaveLength(1);
    const past = await list(undefined, "&results_per_page=3&page=9");
    expect(past.status).toBe(200);
    expect(past.body.objects).toEqual([]);
  });

  it.each(["page=0", "page=-1", "page=abc", "page=1.5"])("rejects %s with 422", async (param) => {
    const res = await co.api("GET", `/dispatcher?${param}`);
    expect(res.status).toBe(422);
    expect(res.body.fields).toBe("page");
  });

  it("filters, orders and limits", async () => {
    const res = await list({ filters: [{ name: "lastname", op: "in", val: ["Zimmer", "Young", "Xavier"] }], order_by: [{ field: "lastname", direction: "asc" }], limit: 2 });
    expect(res.body.num_results).toBe(2);
    expect(res.body.objects.map((u: { lastname: string }) => u.lastname)).toEqual(["Xavier", "Young"]);
  });

  it("takes in lists of a thousand and more values", async () => {
    const res = await list({ filters: [{ name: "lastname", op: "in", val: [...Array.from({ length: 1500 }, (_, i) => `n${i}`), "Young"] }] });
    expect(res.status, res.text).toBe(200);
    expect(res.body.objects.map((u: { lastname: string }) => u.lastname)).toEqual(["Young"]);
  });

  it("single answers the object, 404 for none, 422 for several", async () => {
    const one = await list({ filters: [{ name: "firstname", op: "==", val: "Bert" }], single: true });
    expect(one.status).toBe(200);
    expect(one.body.email).toBe("bert@example.com");
    expect((await list({ filters: [{ name: "firstname", op: "==", val: "Nobody" }], single: true })).status).toBe(404);
    expect((await list({ filters: [{ name: "firstname", op: "is_not_null" }], single: true })).status).toBe(422);
  });

  it("ilike matches regardless of case; like does not", async () => {
    expect((await list({ filters: [{ name: "firstname", op: "ilike", val: "an%" }] })).body.num_results).toBe(1);
    expect((await list({ filters: [{ name: "firstname", op: "like", val: "an%" }] })).body.num_results).toBe(0);
    expect((await list({ filters: [{ name: "firstname", op: "like", val: "An%" }] })).body.num_results).toBe(1);
  });

  it("injection attempts stay data", async () => {
    const res = await list({ filters: [{ name: "lastname", op: "==", val: "x' OR '1'='1" }] });
    expect(res.status).toBe(200);
    expect(res.body.num_results).toBe(0);
    const order = await list({ order_by: [{ field: "id; DROP TABLE users", direction: "asc" }] });
    expect(order.status).toBe(422);
    expect((await list()).body.num_results).toBe(4);
  });

  it("malformed q over HTTP is a 422 naming q", async () => {
    const res = await co.api("GET", "/dispatcher?q=%7Bnot%20json");
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ code: 422, fields: "q" });
  });

  it("unknown field over HTTP is a 422 naming it", async () => {
    const res = await list({ filters: [{ name: "password_hash", op: "is_not_null" }] });
    expect(res.status).toBe(422);
    expect(res.body.fields).toBe("password_hash");
  });

  it("a hidden column cannot be probed", async () => {
    // `users` has password_hash and code_hash, but the allow-list exposes neither.
    expect(users.password_hash).toBeDefined();
    expect((await list({ order_by: [{ field: "code_hash" }] })).status).toBe(422);
  });
});
