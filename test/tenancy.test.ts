import { beforeAll, describe, expect, it } from "vitest";
import { OPERATOR, type TestCompany, call, createCompany } from "./helpers";

describe("tenancy", () => {
  let a: TestCompany;
  let b: TestCompany;
  beforeAll(async () => {
    a = await createCompany();
    b = await createCompany();
  });

  it("a slug one of the service's own paths takes is refused with a 422, and no company is made", async () => {
    for (const slug of ["tiles", "docs", "health", "app", "assets"]) {
      const res = await call("POST", "/_operator/companies", { headers: OPERATOR, body: { slug, companyname: "Shadow", dispatcher: { email: `d@${slug}.example`, password: "correct horse battery" } } });
      expect(res.status, slug).toBe(422);
      expect(res.body).toMatchObject({ fields: "slug", message: expect.stringMatching(/reserved/) });
      expect((await call("POST", `/${slug}/auth`, { body: { email: `d@${slug}.example`, password: "correct horse battery" } })).status).not.toBe(200);
    }
  });

  it("an object of company A is 404 from company B", async () => {
    const mine = await a.api("GET", "/dispatcher");
    const id = mine.body.objects[0].id;
    expect((await a.api("GET", `/dispatcher/${id}`)).status).toBe(200);
    const other = await b.api("GET", `/dispatcher/${id}`);
    expect(other.status).toBe(404);
    expect(other.body).toEqual({ code: 404, message: "Dispatcher not found", fields: "" });
  });

  it("lists show only the company's own rows", async () => {
    const listA = await a.api("GET", "/dispatcher");
    const listB = await b.api("GET", "/dispatcher");
    expect(listA.body.num_results).toBe(1);
    expect(listB.body.num_results).toBe(1);
    expect(listA.body.objects[0].email).toBe(a.dispatcher.email);
    expect(listB.body.objects[0].email).toBe(b.dispatcher.email);
  });

  it("a filter cannot reach another company's rows", async () => {
    const q = JSON.stringify({ filters: [{ name: "email", op: "==", val: b.dispatcher.email }] });
    const res = await a.api("GET", `/dispatcher?q=${encodeURIComponent(q)}`);
    expect(res.body.num_results).toBe(0);
  });

  it("each company sees its own company record and depot", async () => {
    const company = await a.api("GET", "/company");
    expect(company.body).toMatchObject({ num_results: 1, page: 1, total_pages: 1 });
    expect(company.body.objects[0]).toMatchObject({ id: a.id, companyname: `Company ${a.slug}`, pricing_package: 0, test_phase: false });
    const depot = await a.api("GET", "/companyaddress");
    expect(depot.status).toBe(200);
    expect(depot.body).toMatchObject({ id: company.body.objects[0].location_id, postalcode: "10115", city: "Berlin", country: "DE" });
    expect(depot.body.location).toEqual({ type: "Point", coordinates: [13.3849, 52.5317] });
  });
});
