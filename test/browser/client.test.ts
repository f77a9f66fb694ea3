/**
 * The typed client (src/shared/contract/openapi.ts with openapi-fetch): the integrator's example runs
 * against a local service, the checked-in types are what the served document gives, and a change of the
 * document's shape is a type error in code written against the client.
 */
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tomorrow } from "./fixtures";
import { integratorExample } from "./integrator-example";
import { type Service, startService } from "./service";

/** tools/openapi-client/generate.mts on a document: its exit status and output. */
function generate(document: unknown, args: string[]) {
  const file = join("test-results", "client-document.json");
  mkdirSync("test-results", { recursive: true });
  writeFileSync(file, JSON.stringify(document));
  return spawnSync(process.execPath, ["node_modules/tsx/dist/cli.mjs", "tools/openapi-client/generate.mts", "--from", file, ...args], { encoding: "utf8" });
}

const tsc = (project: string) => spawnSync(process.execPath, ["node_modules/typescript/bin/tsc", "--noEmit", "-p", project], { encoding: "utf8" });

const DISPATCHER = { email: "integration@client.example", password: "integrator-password-1" };

describe("the typed client", () => {
  let service: Service;
  beforeAll(async () => {
    service = await startService("client");
    await service.operator("POST", "/companies", { slug: service.slug, companyname: "Client Logistics", language: "en", depot: { city: "Berlin", country: "DE", lat: 52.5317, lng: 13.3849 }, dispatcher: DISPATCHER });
  }, 120_000);
  afterAll(() => service?.stop());

  it("runs the integrator's example: 100 deliveries sent twice and made once, routed, the end heard on the websocket, the routes read", async () => {
    const result = await integratorExample(service.base, service.slug, DISPATCHER, tomorrow);
    expect(result.created).toBe(100);
    expect(result.replayed).toBe(true);
    const listed = await service.call("GET", "/api/delivery", undefined, (await service.call("POST", "/auth", DISPATCHER)).access_token);
    expect(listed.num_results).toBe(100);
    expect(result.routes.length).toBeGreaterThan(0);
    expect(result.routes.reduce((n, r) => n + r.stops, 0)).toBe(100);
  }, 120_000);

  it("is what the served /openapi.json gives (npm run client:check compares it with the route declarations)", async () => {
    const served = await (await fetch(`${service.base}/openapi.json`)).json();
    const check = generate(served, ["--check"]);
    expect(check.stderr).toBe("");
    expect(check.status).toBe(0);
  }, 60_000);

  it("turns a change of the document's shape into a type error in the code written against it", async () => {
    const served = await (await fetch(`${service.base}/openapi.json`)).json();
    served.components.schemas.BulkWritten.properties.num_created = { type: "string" };
    // The example and the changed types, in the repository's layout (openapi-fetch resolves from the repository).
    const dir = join("test-results", "client-drift");
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(join(dir, "src/shared/contract"), { recursive: true });
    mkdirSync(join(dir, "test/browser"), { recursive: true });
    expect(generate(served, ["--out", join(dir, "src/shared/contract/openapi.ts")]).status).toBe(0);
    cpSync("test/browser/integrator-example.ts", join(dir, "test/browser/integrator-example.ts"));
    writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ extends: "../../test/browser/tsconfig.json", include: ["."] }));
    const drifted = tsc(dir);
    expect(drifted.status).not.toBe(0);
    expect(drifted.stdout).toMatch(/integrator-example\.ts.*Type 'string' is not assignable to type 'number'/);
    // The same files with the document as served compile.
    writeFileSync(join(dir, "src/shared/contract/openapi.ts"), readFileSync("src/shared/contract/openapi.ts", "utf8"));
    const clean = tsc(dir);
    expect(clean.stdout + clean.stderr).toBe("");
    expect(clean.status).toBe(0);
  }, 120_000);
});
