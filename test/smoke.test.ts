import { describe, expect, it } from "vitest";
import { call, createCompany } from "./helpers";

describe("smoke", () => {
  it("creates a company and reads it back through the API", async () => {
    const co = await createCompany();
    const res = await co.api("GET", "/company");
    expect(res.status).toBe(200);
    expect(res.body.objects[0].companyname).toBe(`Company ${co.slug}`);
    const unknown = await call("GET", "/nope");
    expect(unknown.status).toBe(404);
  });
});
