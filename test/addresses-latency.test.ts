/**
 * Latency figures of /searchaddress and /addressforlocation (logged, not
 * asserted): 200 calls each through the whole app (JWT, tenancy, rate limit)
 * against local workerd D1 with 1,000 addresses of the company and 1,000 of
 * another one. Local SQLite, no network: figures compare, they do not predict production.
 */
import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { type TestCompany, createCompany } from "./helpers";

const FIRST = ["Anna", "Hans", "Peter", "Clara", "Jörg", "Zoë", "Mehmet", "Olga", "Lukas", "Sophie"];
const LAST = ["Müller", "Schmidt", "Schneider", "Fischer", "Weber", "Meyer", "Wagner", "Becker", "Schulz", "Hoffmann"];
const KIND = ["Bäckerei", "Spedition", "Logistik", "Apotheke", "Blumen", "Getränke", "Elektro", "Café", "Metzgerei", "Druckerei"];
const CITIES = [
  ["10115", "Berlin", 13.38, 52.53],
  ["20095", "Hamburg", 9.99, 53.55],
  ["80331", "München", 11.57, 48.14],
  ["50667", "Köln", 6.96, 50.94],
  ["60311", "Frankfurt am Main", 8.68, 50.11],
] as const;

async function seed(companyId: number, n: number) {
  const statements = [];
  for (let i = 0; i < n; i++) {
    const [postalcode, city, lng, lat] = CITIES[i % CITIES.length];
    statements.push(
      env.DB.prepare(
        `INSERT INTO addresses (company_id, contactcompany, contactlastname, contactfirstname, postalcode, city, country, lng, lat)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'DE', ?7, ?8)`,
      ).bind(
        companyId,
        `${KIND[i % 10]} ${LAST[(i * 7) % 10]} ${i}`,
        LAST[(i * 3) % 10],
        FIRST[i % 10],
        postalcode,
        city,
        lng + ((i * 37) % 200) / 1000,
        lat + ((i * 53) % 200) / 1000,
      ),
    );
  }
  for (let i = 0; i < statements.length; i += 100) await env.DB.batch(statements.slice(i, i + 100));
}

describe("address endpoint latency (logged)", () => {
  let co: TestCompany;
  beforeAll(async () => {
    co = await createCompany();
    const other = await createCompany();
    await seed(co.id, 1000);
    await seed(other.id, 1000);
  });

  it("mean latency of 200 searchaddress and 200 addressforlocation calls", async () => {
    const queries = ["Müller", "Spedition Schmidt", '"Bäckerei Weber"', "Hoff*", "Anna OR Peter", "Logistik NOT Berlin", "muller fischer", "Café*"];
    let t0 = performance.now();
    for (let i = 0; i < 200; i++) {
      const res = await co.api("GET", `/searchaddress?query=${encodeURIComponent(queries[i % queries.length])}&limit=10&citocode=${i % 2 === 0}`);
      expect(res.status).toBe(200);
    }
    const search = (performance.now() - t0) / 200;

    t0 = performance.now();
    let stored = 0;
    for (let i = 0; i < 200; i++) {
      const [, , lng, lat] = CITIES[i % CITIES.length];
      // half on seeded addresses' coordinates, half between them
      const res = await co.api("GET", `/addressforlocation?lon=${lng + ((i * 37) % 200) / 1000 + (i % 2) * 0.01}&lat=${lat + ((i * 53) % 200) / 1000}`);
      expect(res.status).toBe(200);
      if (res.body.id !== null) stored++;
    }
    const reverse = (performance.now() - t0) / 200;

    // the same app stack on a trivial endpoint: what the two figures have in common
    const depot = (await co.api("GET", "/companyaddress")).body.id;
    t0 = performance.now();
    for (let i = 0; i < 200; i++) expect((await co.api("GET", `/address/${depot}`)).status).toBe(200);
    const baseline = (performance.now() - t0) / 200;
    console.log(
      `address latency (local workerd, 1000+1000 addresses): searchaddress mean ${search.toFixed(2)} ms; ` +
        `addressforlocation mean ${reverse.toFixed(2)} ms (${stored}/200 answered a stored address); GET /address/{id} mean ${baseline.toFixed(2)} ms`,
    );
  }, 120_000);
});
