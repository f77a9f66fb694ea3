import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { OPERATOR, type TestCompany, call, createCompany, login } from "./helpers";

const outbox = async (slug: string) => {
  const res = await call("GET", `/_operator/companies/${slug}/outbox?results_per_page=100`, { headers: OPERATOR });
  expect(res.status).toBe(200);
  return res.body.objects as { to: string; template: string; body: string; data: Record<string, string> }[];
};

const insertRoute = async (companyId: number, driverId: number, status: number, extra: { tst_from?: string; ast?: string } = {}) => {
  const r = await env.DB.prepare("insert into routes (company_id, driver_id, status, tst_from, ast) values (?, ?, ?, ?, ?)")
    .bind(companyId, driverId, status, extra.tst_from ?? null, extra.ast ?? null)
    .run();
  return r.meta.last_row_id as number;
};

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");

describe("drivers", () => {
  let co: TestCompany;
  let watcher: { token: string };
  beforeAll(async () => {
    co = await createCompany();
    watcher = await co.user("watcher");
  });

  it("POST /driver creates a driver with the interface defaults", async () => {
    const res = await co.api("POST", "/driver", { body: { firstname: "Dana", lastname: "Drive", email: "Dana@Example.com", mobilenr: "+49 170 1234567" } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      firstname: "Dana",
      lastname: "Drive",
      email: "dana@example.com",
      mobilenr: "+49 170 1234567",
      company_id: co.id,
      active: false,
      vehicle: "car",
      status: 0,
      usertype: "driver",
      confirmed_at: null,
      expires: null,
      driveravailabilities: [],
    });
    expect(res.body.htmlcolor).toMatch(/^[0-9a-f]{6}$/);
    expect(res.body.id).toBeGreaterThan(0);
    expect(res.body).not.toHaveProperty("code");
    expect(res.body).not.toHaveProperty("password_hash");
  });

  it("POST /driver accepts colour, vehicle, status and expires", async () => {
    const res = await co.api("POST", "/driver", {
      body: { email: "opt@example.com", htmlcolor: "#A1B2C3", vehicle: "bicycle", status: 1, expires: "2027-01-01T12:00:00+01:00", active: true, usertype: "dispatcher" },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ htmlcolor: "a1b2c3", vehicle: "bicycle", status: 1, expires: "2027-01-01T11:00:00Z", active: false, usertype: "driver" });
  });

  it("POST /driver validates and rejects duplicate emails", async () => {
    const missing = await co.api("POST", "/driver", { body: { firstname: "No Mail" } });
    expect(missing.status).toBe(422);
    expect(missing.body.fields).toBe("email");
    const bad = await co.api("POST", "/driver", { body: { email: "x@example.com", htmlcolor: "red", status: 9 } });
    expect(bad.status).toBe(422);
    expect(bad.body.fields.split(",").sort()).toEqual(["htmlcolor", "status"]);
    const first = await co.api("POST", "/driver", { body: { email: "twice@example.com" } });
    expect(first.status).toBe(201);
    const again = await co.api("POST", "/driver", { body: { email: "TWICE@example.com" } });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ code: 409, fields: "email" });
  });

  it("POST /driver queues activation email, dispatcher notice and operator copy", async () => {
    const other = await createCompany();
    const res = await other.api("POST", "/driver", { body: { firstname: "Otto", email: "otto@example.com" } });
    expect(res.status).toBe(201);
    const messages = await outbox(other.slug);
    expect(messages.map((m) => m.template).sort()).toEqual(["driver_activation", "driver_created_dispatcher", "driver_created_operator"]);
    const activation = messages.find((m) => m.template === "driver_activation")!;
    expect(activation.to).toBe("otto@example.com");
    expect(activation.data.code).toMatch(/^[A-Z0-9]{12}$/);
    expect(activation.data.link).toContain(`code=${activation.data.code}`);
    expect(messages.find((m) => m.template === "driver_created_dispatcher")!.to).toBe(other.dispatcher.email);
    expect(messages.find((m) => m.template === "driver_created_operator")!.to).toBe(env.OPERATOR_EMAIL);
  });

  it("registration and activation: code registers once, activates once", async () => {
    const other = await createCompany();
    const created = await other.api("POST", "/driver", { body: { email: "newbie@example.com" } });
    const code = (await outbox(other.slug)).find((m) => m.template === "driver_activation")!.data.code;
    const wrongRegister = await call("POST", `/${other.slug}/register`, { body: { email: "newbie@example.com", code: "WRONGCODE123", password: "a long password" } });
    expect(wrongRegister.status).toBe(403);
    const registered = await call("POST", `/${other.slug}/register`, { body: { email: "newbie@example.com", code, password: "a long password" } });
    expect(registered.status).toBe(200);
    expect(registered.body.confirmed_at).toMatch(/Z$/);
    const token = await login(other.slug, "newbie@example.com", "a long password");

    const wrong = await other.api("POST", "/activatedriver", { token, body: { code: "WRONGCODE123", imei: "356938035643809" } });
    expect(wrong.status).toBe(403);
    expect(wrong.body).toMatchObject({ code: 403 });
    const ok = await other.api("POST", "/activatedriver", { token, body: { code, imei: "356938035643809" } });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ message: "Driver activated", status: 200 });
    const driver = await other.api("GET", `/driver/${created.body.id}`);
    expect(driver.body.active).toBe(true);
    const row = await env.DB.prepare("select imei from users where id = ?").bind(created.body.id).first<{ imei: string }>();
    expect(row!.imei).toBe("356938035643809");
    const reuse = await other.api("POST", "/activatedriver", { token, body: { code, imei: "other" } });
    expect(reuse.status).toBe(403);
    expect(reuse.body.code).toBe(403);
  });

  it("activatedriver is for drivers only, and checks the driver's own code", async () => {
    const a = await co.user("driver");
    const b = await co.user("driver");
    expect((await co.api("POST", "/activatedriver", { body: { code: a.code, imei: "1" } })).status).toBe(403);
    expect((await co.api("POST", "/activatedriver", { token: b.token, body: { code: a.code, imei: "1" } })).status).toBe(403);
    const missing = await co.api("POST", "/activatedriver", { token: a.token, body: { code: a.code } });
    expect(missing.status).toBe(422);
    expect(missing.body.fields).toBe("imei");
    expect((await co.api("POST", "/activatedriver", { token: a.token, body: { code: a.code, imei: "1" } })).status).toBe(200);
  });

  it("PATCH /driver/{id} changes writable fields and keeps read-only ones", async () => {
    const created = await co.api("POST", "/driver", { body: { email: "patch@example.com", firstname: "Pat" } });
    const id = created.body.id;
    const res = await co.api("PATCH", `/driver/${id}`, { body: { lastname: "Smith", status: 3, vehicle: "truck", htmlcolor: "00ff00", mobilenr: null } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id, firstname: "Pat", lastname: "Smith", status: 3, vehicle: "truck", htmlcolor: "00ff00", mobilenr: null, usertype: "driver" });

    // Sending back a read object is fine: unchanged read-only values are accepted.
    const roundTrip = await co.api("PATCH", `/driver/${id}`, { body: { ...res.body, firstname: "Patty" } });
    expect(roundTrip.status).toBe(200);
    expect(roundTrip.body.firstname).toBe("Patty");

    const readOnly = await co.api("PATCH", `/driver/${id}`, { body: { usertype: "dispatcher", company_id: co.id + 1000, confirmed_at: "2026-01-01T00:00:00Z" } });
    expect(readOnly.status).toBe(422);
    expect(readOnly.body.fields.split(",").sort()).toEqual(["company_id", "confirmed_at", "usertype"]);
    const still = await co.api("GET", `/driver/${id}`);
    expect(still.body).toMatchObject({ usertype: "driver", company_id: co.id, confirmed_at: null, lastname: "Smith" });

    expect((await co.api("PATCH", `/driver/${id}`, { body: { status: 7 } })).status).toBe(422);
    expect((await co.api("PATCH", "/driver/999999", { body: { status: 1 } })).status).toBe(404);
    expect((await co.api("PATCH", `/driver/${id}`, { body: { email: "TWICE@example.com" } })).status).toBe(409);
  });

  it("drivers and watchers may not create or change drivers", async () => {
    const driver = await co.user("driver");
    for (const token of [driver.token, watcher.token]) {
      expect((await co.api("POST", "/driver", { token, body: { email: "sneaky@example.com" } })).status).toBe(403);
      const patch = await co.api("PATCH", `/driver/${driver.id}`, { token, body: { firstname: "Me" } });
      expect(patch.status).toBe(403);
      expect(patch.body.code).toBe(403);
    }
    // Reading is allowed for every role.
    expect((await co.api("GET", "/driver", { token: watcher.token })).status).toBe(200);
    expect((await co.api("GET", "/driver", { token: driver.token })).status).toBe(200);
  });

  it("GET /driver lists drivers with q, availability and position", async () => {
    const other = await createCompany();
    const a = (await other.api("POST", "/driver", { body: { email: "a@example.com", firstname: "Anna" } })).body;
    const b = (await other.api("POST", "/driver", { body: { email: "b@example.com", firstname: "Bert" } })).body;
    await other.user("watcher");
    const now = Date.now();
    const current = await other.api("POST", "/driveravailability", { body: { driver_id: a.id, fromtime: iso(now - 3600_000), totime: iso(now + 3600_000) } });
    const past = await other.api("POST", "/driveravailability", { body: { driver_id: b.id, fromtime: iso(now - 7200_000), totime: iso(now - 3600_000) } });
    const future = await other.api("POST", "/driveravailability", { body: { driver_id: b.id, fromtime: iso(now + 3600_000), totime: iso(now + 7200_000) } });
    expect([current.status, past.status, future.status]).toEqual([200, 200, 200]);
    await other.api("POST", "/drivertracking", { body: { driver_id: a.id, timestamp: iso(now - 60_000), position: { type: "Point", coordinates: [13.4, 52.5] } } });
    const newest = await other.api("POST", "/drivertracking", { body: { driver_id: a.id, timestamp: iso(now - 10_000), position: { type: "Point", coordinates: [13.41, 52.51] } } });

    const plain = await other.api("GET", "/driver");
    expect(plain.status).toBe(200);
    expect(plain.body).toMatchObject({ num_results: 2, page: 1, total_pages: 1 });
    expect(plain.body.objects.map((d: any) => d.email)).toEqual(["a@example.com", "b@example.com"]);
    expect(plain.body.objects[0]).not.toHaveProperty("available");
    expect(plain.body.objects[0]).not.toHaveProperty("current_position");
    expect(plain.body.objects[0].driveravailabilities).toEqual([current.body]);
    // Ended windows are not listed on the driver.
    expect(plain.body.objects[1].driveravailabilities).toEqual([future.body]);

    const full = await other.api("GET", "/driver?includeavail=true&includeposition=true");
    const [fa, fb] = full.body.objects;
    expect(fa.available).toBe(true);
    expect(fb.available).toBe(false);
    expect(fa.current_position).toEqual(newest.body);
    expect(fb.current_position).toBeNull();

    const info = await other.api("GET", "/driver?driverinfo=1");
    expect(info.body.objects[0].current_position).toEqual({ ...newest.body, firstname: "Anna", lastname: null, htmlcolor: a.htmlcolor });

    const q = JSON.stringify({ filters: [{ name: "firstname", op: "==", val: "Bert" }] });
    const filtered = await other.api("GET", `/driver?q=${encodeURIComponent(q)}`);
    expect(filtered.body.objects.map((d: any) => d.id)).toEqual([b.id]);
    const byWindow = JSON.stringify({ filters: [{ name: "driveravailabilities", op: "any", val: { name: "totime", op: "<", val: iso(now) } }] });
    expect((await other.api("GET", `/driver?q=${encodeURIComponent(byWindow)}`)).body.objects.map((d: any) => d.id)).toEqual([b.id]);
    const badField = await other.api("GET", `/driver?q=${encodeURIComponent(JSON.stringify({ filters: [{ name: "password_hash", op: "is_not_null" }] }))}`);
    expect(badField.status).toBe(422);
    expect(badField.body.fields).toBe("password_hash");
    const single = await other.api("GET", `/driver?q=${encodeURIComponent(JSON.stringify({ filters: [{ name: "id", op: "==", val: a.id }], single: true }))}`);
    expect(single.body).toMatchObject({ id: a.id, email: "a@example.com" });
    expect((await other.api("GET", "/driver?includeavail=maybe")).status).toBe(422);
  });

  it("GET /driverstatus lists the status values", async () => {
    const res = await co.api("GET", "/driverstatus", { token: watcher.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      num_results: 4,
      page: 1,
      total_pages: 1,
      objects: [
        { id: 0, name: "offline" },
        { id: 1, name: "available" },
        { id: 2, name: "ontour" },
        { id: 3, name: "break" },
      ],
    });
  });

  it("driverroute and currentdriverroute", async () => {
    const other = await createCompany();
    const d = (await other.api("POST", "/driver", { body: { email: "router@example.com" } })).body;
    expect((await other.api("GET", `/driverroute/${d.id}`)).status).toBe(404);
    expect((await other.api("GET", `/currentdriverroute/${d.id}`)).status).toBe(404);

    const later = await insertRoute(other.id, d.id, 1, { tst_from: "2026-11-25T09:00:00Z" });
    const sooner = await insertRoute(other.id, d.id, 2, { tst_from: "2026-11-24T09:00:00Z" });
    await insertRoute(other.id, d.id, 4, { tst_from: "2026-11-20T09:00:00Z" });
    await insertRoute(other.id, d.id, 1);
    expect((await other.api("GET", `/driverroute/${d.id}`)).status).toBe(404);
    const next = await other.api("GET", `/currentdriverroute/${d.id}`);
    expect(next.status).toBe(200);
    expect(next.body).toEqual({ route_id: sooner, status: 2 });

    const driving = await insertRoute(other.id, d.id, 3, { tst_from: "2026-11-26T09:00:00Z", ast: "2026-11-22T08:00:00Z" });
    expect((await other.api("GET", `/driverroute/${d.id}`)).body).toEqual({ route_id: driving, status: 3 });
    expect((await other.api("GET", `/currentdriverroute/${d.id}`)).body).toEqual({ route_id: driving, status: 3 });
    expect(later).toBeGreaterThan(0);

    expect((await other.api("GET", "/driverroute/999999")).status).toBe(404);
    // Another company's driver does not exist here.
    expect((await co.api("GET", `/driverroute/${d.id}`)).status).toBe(404);
    expect((await co.api("GET", `/currentdriverroute/${d.id}`)).status).toBe(404);
  });

  it("tenancy: company B cannot read or change company A's drivers", async () => {
    const a = await createCompany();
    const b = await createCompany();
    const driver = (await a.api("POST", "/driver", { body: { email: "mine@example.com" } })).body;
    expect((await b.api("GET", `/driver/${driver.id}`)).status).toBe(404);
    expect((await b.api("PATCH", `/driver/${driver.id}`, { body: { firstname: "Stolen" } })).status).toBe(404);
    expect((await b.api("GET", "/driver")).body.num_results).toBe(0);
    const q = JSON.stringify({ filters: [{ name: "id", op: "==", val: driver.id }] });
    expect((await b.api("GET", `/driver?q=${encodeURIComponent(q)}`)).body.objects).toEqual([]);
    expect((await a.api("GET", `/driver/${driver.id}`)).body.firstname).toBeNull();
    // Dispatchers are not drivers.
    const dispatcherId = (await a.api("GET", "/dispatcher")).body.objects[0].id;
    expect((await a.api("GET", `/driver/${dispatcherId}`)).status).toBe(404);
  });
});

describe("OpenAPI description of the driver, availability, tracking and vehicle endpoints", () => {
  it("declares every endpoint with its roles and documents the status values and the merge responses", async () => {
    const res = await call("GET", "/openapi.json");
    expect(res.status).toBe(200);
    const paths = res.body.paths as Record<string, Record<string, any>>;
    const expected: [string, string][] = [
      ["get", "/driver"], ["post", "/driver"], ["get", "/driver/{driver_id}"], ["patch", "/driver/{driver_id}"],
      ["post", "/activatedriver"], ["get", "/driverstatus"], ["get", "/driverroute/{driver_id}"], ["get", "/currentdriverroute/{driver_id}"],
      ["get", "/driveravailability"], ["post", "/driveravailability"], ["patch", "/driveravailability"],
      ["get", "/driveravailability/{driveravailability_id}"], ["delete", "/driveravailability/{driveravailability_id}"], ["post", "/mergedriveravailability"],
      ["get", "/drivertracking"], ["post", "/drivertracking"], ["get", "/drivertracking/{drivertracking_id}"], ["delete", "/drivertracking/{drivertracking_id}"],
      ["get", "/driverposition"], ["get", "/driverposition/{driver_id}"], ["get", "/drivertrace/{driver_id}"],
      ["get", "/vehicletype"], ["get", "/vehicle"], ["post", "/vehicle"], ["patch", "/vehicle"], ["get", "/vehicle/{vehicle_id}"],
    ];
    for (const [method, path] of expected) {
      const op = paths[`/{slug}/api${path}`]?.[method];
      expect(op, `${method} ${path}`).toBeDefined();
      expect(op.security).toEqual([{ JWT: [] }]);
    }
    expect(paths["/{slug}/api/driverstatus"].get.description).toContain("3 `break`");
    expect(Object.keys(paths["/{slug}/api/mergedriveravailability"].post.responses)).toEqual(expect.arrayContaining(["200", "201"]));
    expect(Object.keys(paths["/{slug}/api/driver"].post.responses)).toContain("201");
  });
});

describe("large pages", () => {
  it("a page of 100 drivers with availability and positions (D1 binds at most 100 parameters)", async () => {
    const co = await createCompany();
    const stmt = env.DB.prepare("insert into users (company_id, usertype, email, status, vehicle) values (?, 'driver', ?, 0, 'car')");
    await env.DB.batch(Array.from({ length: 105 }, (_, i) => stmt.bind(co.id, `bulk${i}@example.com`)));
    const page = await co.api("GET", "/driver?results_per_page=100&includeavail=true&includeposition=true");
    expect(page.status).toBe(200);
    expect(page.body.num_results).toBe(105);
    expect(page.body.objects).toHaveLength(100);
    expect(page.body.objects.every((d: any) => d.available === false && d.current_position === null)).toBe(true);
    const ids = page.body.objects.map((d: any) => d.id);
    const tracked = await co.api("POST", "/drivertracking", { body: ids.map((id: number) => ({ driver_id: id, position: { type: "Point", coordinates: [13, 52] } })) });
    expect(tracked.status).toBe(200);
    const positions = await co.api("GET", "/driverposition?results_per_page=100");
    expect(positions.body.num_results).toBe(100);
    expect(positions.body.objects.map((p: any) => p.driver_id)).toEqual(ids);
  });
});
