import { beforeAll, describe, expect, it } from "vitest";
import { apiRoutes } from "../src/worker/app";
import { declaredRoles } from "../src/worker/openapi";
import { type TestCompany, createCompany } from "./helpers";

/** Every mutating endpoint of the app's route table, with path parameters filled in. */
const mutatingRoutes = () => {
  const seen = new Set<string>();
  return apiRoutes.routes
    .filter((r) => !["GET", "HEAD", "OPTIONS", "ALL"].includes(r.method))
    // The live channel's ticket is for every role: watchers watch.
    .filter((r) => !(r.method === "POST" && r.path === "/ws/ticket"))
    .map((r) => ({ method: r.method, path: r.path, url: r.path.replace(/:[a-z_]+(\{[^}]*\})?/g, "1") }))
    .filter((r) => !seen.has(`${r.method} ${r.path}`) && seen.add(`${r.method} ${r.path}`));
};

describe("roles", () => {
  let co: TestCompany;
  let watcher: { token: string };
  let driver: { token: string };
  beforeAll(async () => {
    co = await createCompany();
    watcher = await co.user("watcher");
    driver = await co.user("driver");
  });

  it("the route table has mutating routes to check", () => {
    expect(mutatingRoutes().length).toBeGreaterThanOrEqual(2);
  });

  it("watchers get 403 on every mutating route", async () => {
    for (const route of mutatingRoutes()) {
      const res = await co.api(route.method, route.url, { token: watcher.token, body: {} });
      expect(res.status, `${route.method} ${route.path}`).toBe(403);
      expect(res.body.code).toBe(403);
    }
  });

  it("drivers get 403 on every mutating route not declared for drivers", async () => {
    const dispatcherOnly = mutatingRoutes().filter((r) => {
      const openApiPath = r.path.replace(/:([a-z_]+)/g, "{$1}");
      return !declaredRoles.get(`${r.method} ${openApiPath}`)?.includes("driver");
    });
    expect(dispatcherOnly.length).toBeGreaterThan(0);
    for (const route of dispatcherOnly) {
      const res = await co.api(route.method, route.url, { token: driver.token, body: {} });
      expect(res.status, `${route.method} ${route.path}`).toBe(403);
    }
  });

  it("every mutating route declares its roles", () => {
    for (const r of mutatingRoutes()) {
      const openApiPath = r.path.replace(/:([a-z_]+)/g, "{$1}");
      expect(declaredRoles.has(`${r.method} ${openApiPath}`), `${r.method} ${r.path}`).toBe(true);
    }
  });

  it("watchers and drivers may read", async () => {
    expect((await co.api("GET", "/company", { token: watcher.token })).status).toBe(200);
    expect((await co.api("GET", "/dispatcher", { token: driver.token })).status).toBe(200);
  });

  it("dispatchers may invite users", async () => {
    const res = await co.api("POST", "/adduser/dispatcher", { body: { firstname: "Dora", lastname: "Disp", email: "dora@example.com" } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ usertype: "dispatcher", active: true, confirmed_at: null });
    const duplicate = await co.api("POST", "/adduser/watcher", { body: { email: "DORA@example.com" } });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.fields).toBe("email");
  });
});
