import { createExecutionContext, env, runDurableObjectAlarm } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { and, eq } from "drizzle-orm";
import { afterEach, describe, expect, it, vi } from "vitest";
import { instantOf } from "../src/shared/wall-clock";
import { readCsv, readXlsx } from "../src/core/lib/spreadsheet";
import { createDb } from "../src/core/db/client";
import { processes } from "../src/core/db/schema";
import worker from "../src/worker/index";
import { ORIGIN, OPERATOR, type TestCompany, call, createCompany, login, tomorrowAt } from "./helpers";
import { zip } from "./zip";
import { csvCell } from "../src/core/lib/csv";

/** An XLSX workbook with shared strings, an inline string, numbers and a date serial. */
/** Tomorrow 09:00 on the wall clock as an Excel date serial (days since 1899-12-30, no zone). */
const tomorrowSerial = () => Date.parse(tomorrowAt(9)) / 86_400_000 + 25569;

async function workbook(serial = tomorrowSerial()): Promise<Uint8Array> {
  const shared = ["custom_id", "PLZ", "Ort", "Von", "Bis", "load", "tour", "Ansbacher Straße &amp; Co", "Berlin", "X-1"];
  const sst = `<?xml version="1.0"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">${shared.map((t) => `<si><t>${t}</t></si>`).join("")}</sst>`;
  const sheet = `<?xml version="1.0"?><worksheet><sheetData>
    <row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c><c r="C1" t="s"><v>2</v></c><c r="D1" t="s"><v>3</v></c><c r="E1" t="s"><v>4</v></c><c r="F1" t="s"><v>5</v></c><c r="G1" t="s"><v>6</v></c></row>
    <row r="2"><c r="A2" t="s"><v>9</v></c><c r="B2" t="inlineStr"><is><t>10115</t></is></c><c r="C2" t="s"><v>8</v></c><c r="D2"><v>${serial}</v></c><c r="F2"><v>3</v></c><c r="G2" t="str"><v>North</v></c></row>
  </sheetData></worksheet>`;
  return zip([
    { name: "[Content_Types].xml", text: "<Types/>", stored: true },
    { name: "xl/sharedStrings.xml", text: sst },
    { name: "xl/worksheets/sheet1.xml", text: sheet },
  ]);
}

async function upload(co: TestCompany, path: string, files: { name: string; body: string | Uint8Array }[], email?: string, token = co.dispatcher.token) {
  const form = new FormData();
  for (const f of files) form.append("file[]", new File([f.body], f.name));
  if (email) form.append("email", email);
  const res = await exports.default.fetch(new Request(`${ORIGIN}/${co.slug}/api${path}`, { method: "POST", headers: { Authorization: `JWT ${token}` }, body: form }));
  const text = await res.text();
  return { status: res.status, body: text.startsWith("{") ? JSON.parse(text) : text };
}

const DAY = 86_400_000;

async function waitFinal(co: TestCompany, pid: string) {
  for (let i = 0; i < 150; i++) {
    const res = await co.api("GET", `/process/status/${pid}`);
    if (["finished", "failed"].includes(res.body.final.status)) return res.body;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error("upload did not finish");
}

describe("spreadsheet reading", () => {
  it("reads CSV with semicolons, quotes, embedded newlines and a BOM-free header", () => {
    expect(readCsv('plz;ort;notes\r\n10115;Berlin;"ring ""twice""\nplease"\n\n80331;München;\n')).toEqual([
      ["plz", "ort", "notes"],
      ["10115", "Berlin", 'ring "twice"\nplease'],
      ["80331", "München", ""],
    ]);
    expect(readCsv("a,b\n1,2")).toEqual([["a", "b"], ["1", "2"]]);
  });

  it("reads the first worksheet of an XLSX file: shared, inline and plain cells", async () => {
    const rows = await readXlsx(await workbook(46000.375));
    expect(rows[0]).toEqual(["custom_id", "PLZ", "Ort", "Von", "Bis", "load", "tour"]);
    expect(rows[1]).toEqual(["X-1", "10115", "Berlin", "46000.375", "", "3", "North"]);
  });
});

describe("uploads", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("deliveryonly creates deliveries, reports unusable rows, and batchrouting routes them as the same process", async () => {
    const co = await createCompany();
    const csv = [
      "custom_id;PLZ;Ort;Von;Bis;load;tour",
      `U-1;10115;Berlin;${tomorrowAt(8)};${tomorrowAt(12)};2;A`,
      `U-2;10243;Berlin;${tomorrowAt(8)};${tomorrowAt(12)};2;A`,
      `U-3;00000;Nowhereville;${tomorrowAt(8)};${tomorrowAt(12)};1;B`,
      `U-4;80331;München;${tomorrowAt(9)};${tomorrowAt(13)};many;B`,
    ].join("\n");
    const res = await upload(co, "/upload/deliveryonly", [{ name: "orders.csv", body: csv }]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.num_created).toBe(2);
    const vague = [...res.body.vague_addresses].sort((x: { row: number }, y: { row: number }) => x.row - y.row);
    expect(vague).toMatchObject([
      { file: "orders.csv", row: 4, street: null, housenumber: null, postalcode: "00000", city: "Nowhereville", country: null },
      { file: "orders.csv", row: 5, message: "load is not a number", street: null, postalcode: "80331", city: "München", country: null },
    ]);
    const created = await co.api("GET", `/delivery/${res.body.delivery_ids[0]}`);
    expect(created.body).toMatchObject({ custom_id: "U-1", custom_tour: "A", load: 2, pdt_from: tomorrowAt(8) });

    const started = await co.api("POST", `/batchrouting/${res.body.process_id}`);
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    expect(started.body.status.routing.status).toBe("waiting");
    const final = await waitFinal(co, res.body.process_id);
    expect(final.final.status, final.routing.meta).toBe("finished");
    expect(final.import_deliveries.vague_addresses).toHaveLength(2);
    const routes = await co.api("GET", `/process/status/${res.body.process_id}?response_data=base`);
    // Pre-clustered: both rows of tour A on one tour.
    expect(routes.body.objects).toHaveLength(1);
    expect((await co.api("POST", `/batchrouting/${res.body.process_id}`)).status).toBe(409);
  });

  it("reads the second and third loads and the required skills (a comma list) of each row; a bad skill name rejects the row", async () => {
    const co = await createCompany();
    const csv = [
      "custom_id;PLZ;Ort;load;volume;paletten;skills",
      'S-1;10115;Berlin;2;3;1;"Refrigerated, tail-lift"',
      "S-2;10243;Berlin;1;;;",
      "S-3;10245;Berlin;1;;;cold!",
    ].join("\n");
    const res = await upload(co, "/upload/deliveryonly", [{ name: "skills.csv", body: csv }]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.num_created).toBe(2);
    expect(res.body.vague_addresses).toMatchObject([{ row: 4, message: expect.stringMatching(/cold! is not a skill name/) }]);
    const [first, second] = await Promise.all(res.body.delivery_ids.map((id: number) => co.api("GET", `/delivery/${id}`)));
    expect(first.body).toMatchObject({ custom_id: "S-1", load: 2, load_2: 3, load_3: 1, required_skills: ["refrigerated", "tail-lift"] });
    expect(second.body).toMatchObject({ custom_id: "S-2", load: 1, load_2: null, load_3: null, required_skills: [] });
  });

  it("reads opening hours as several time windows on the row's day; a cell not of that form rejects the row", async () => {
    const co = await createCompany();
    const day = tomorrowAt(0).slice(0, 10);
    const csv = [
      "custom_id;PLZ;Ort;Von;Öffnungszeiten",
      `W-1;10115;Berlin;${day}T07:00:00+01:00;"08:00-12:00, 14:00-18:00"`,
      `W-2;10243;Berlin;${day}T07:00:00+01:00;mornings`,
    ].join("\n");
    const res = await upload(co, "/upload/deliveryonly", [{ name: "hours.csv", body: csv }]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.num_created).toBe(1);
    expect(res.body.vague_addresses).toMatchObject([{ row: 3, message: expect.stringMatching(/time_windows must be like 08:00-12:00/) }]);
    const created = await co.api("GET", `/delivery/${res.body.delivery_ids[0]}`);
    // Times of day on the company's clock (Europe/Berlin).
    const berlin = (t: string) => new Date(instantOf(day, t, "Europe/Berlin")).toISOString().replace(".000Z", "Z");
    expect(created.body.time_windows).toEqual([
      { from: berlin("08:00"), to: berlin("12:00") },
      { from: berlin("14:00"), to: berlin("18:00") },
    ]);
    expect(created.body).toMatchObject({ pdt_from: `${day}T06:00:00Z`, pdt_to: berlin("18:00") });
  });

  it("onestep imports an XLSX file, routes it, stores the result spreadsheet and emails its link", async () => {
    const co = await createCompany();
    const res = await upload(co, "/upload/onestep?num_vehicles=2", [{ name: "plan.xlsx", body: await workbook() }], "planner@example.com");
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const pid = res.body.process_id;
    const final = await waitFinal(co, pid);
    expect(final.final.status, JSON.stringify(final)).toBe("finished");
    expect(final.import_deliveries.status).toBe("finished");
    expect(final.cluster_deliveries.status).toBe("finished");
    // Absolute, with the company's slug: the link works as given.
    expect(final.final.link).toBe(`${ORIGIN}/${co.slug}/api/process/result/${pid}`);
    const csv = await exports.default.fetch(new Request(final.final.link, { headers: { Authorization: `JWT ${co.dispatcher.token}` } }));
    expect(csv.status).toBe(200);
    const lines = (await csv.text()).trim().split("\n");
    expect(lines[0]).toBe("tour,route_id,orderindex,delivery_id,custom_id,contactcompany,contactlastname,street,housenumber,postalcode,city,pdt_from,pdt_to,eta_from,eta_to,tdt_from,tdt_to");
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain("X-1");
    // The date cell is read on the company's wall clock (Europe/Berlin).
    expect(lines[1]).toContain(new Date(instantOf(tomorrowAt(9).slice(0, 10), "09:00", "Europe/Berlin")).toISOString().replace(".000Z", "Z"));
    const outbox = await call("GET", `/_operator/companies/${co.slug}/outbox?q=${encodeURIComponent(JSON.stringify({ filters: [{ name: "template", op: "==", val: "upload_result" }] }))}`, { headers: OPERATOR });
    expect(outbox.body.objects[0]).toMatchObject({ to: "planner@example.com" });
    expect(outbox.body.objects[0].data).toMatchObject({ link: final.final.link, files: expect.stringContaining(".xlsx") });
    const emailed = await exports.default.fetch(new Request(outbox.body.objects[0].data.link, { headers: { Authorization: `JWT ${co.dispatcher.token}` } }));
    expect(emailed.status).toBe(200);
    expect((await emailed.text()).trim().split("\n")).toEqual(lines);
  });

  it("the result spreadsheet neutralises formulas (=, +, -, @ get a leading quote) and leaves numbers alone", async () => {
    const co = await createCompany();
    const csv = [
      "custom_id;Firma;Nachname;PLZ;Ort;tour",
      '=HYPERLINK("https://example.org","x");@SUM(1+1);+1+2;10115;Berlin;T',
      "-42;-2+3;Plain;10243;Berlin;T",
    ].join("\n");
    const res = await upload(co, "/upload/onestep?num_vehicles=1&nameprefix=%3D1%2B1", [{ name: "formulas.csv", body: csv }]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const final = await waitFinal(co, res.body.process_id);
    expect(final.final.status, JSON.stringify(final)).toBe("finished");
    const file = await exports.default.fetch(new Request(final.final.link, { headers: { Authorization: `JWT ${co.dispatcher.token}` } }));
    const [header, ...rows] = readCsv(await file.text());
    const column = (name: string) => rows.map((r) => r[header.indexOf(name)]).sort();
    expect(column("custom_id")).toEqual(["'=HYPERLINK(\"https://example.org\",\"x\")", "-42"]);
    expect(column("contactcompany")).toEqual(["'-2+3", "'@SUM(1+1)"]);
    expect(column("contactlastname")).toEqual(["'+1+2", "Plain"]);
    expect(column("tour").every((t) => t.startsWith("'=1+1"))).toBe(true);
    expect(column("postalcode")).toEqual(["10115", "10243"]);
    for (const name of ["route_id", "orderindex", "delivery_id"]) expect(column(name).every((v) => /^\d+$/.test(v)), name).toBe(true);
    // Tab and carriage return before a formula, which an upload trims but other sources may carry.
    expect(["\t=1+1", "\r=1+1", "-1", "+49", "12", "a=b"].map(csvCell)).toEqual(["'\t=1+1", '"\'\r=1+1"', "-1", "+49", "12", "a=b"]);
    expect(csvCell(-5)).toBe("-5");
  });

  it("refuses empty files and header-only files with 422 and creates nothing", async () => {
    const co = await createCompany();
    for (const path of ["/upload/deliveryonly", "/upload/onestep"]) {
      for (const body of ["", "custom_id;PLZ;Ort\n", "custom_id;PLZ;Ort\n;;\n\n"]) {
        const res = await upload(co, path, [{ name: "empty.csv", body }]);
        expect(res.status, `${path} ${JSON.stringify(body)}`).toBe(422);
        expect(res.body).toMatchObject({ code: 422, fields: "file[]" });
        expect(res.body.message).toContain("empty.csv");
      }
      // One empty file among good ones refuses the whole upload.
      const mixed = await upload(co, path, [{ name: "good.csv", body: "PLZ;Ort\n10115;Berlin" }, { name: "empty.csv", body: "PLZ;Ort" }]);
      expect(mixed.status).toBe(422);
    }
    expect((await co.api("GET", "/delivery")).body.num_results).toBe(0);
    expect((await co.api("GET", "/route")).body.num_results).toBe(0);
  });

  it("a one-step upload's files, result spreadsheet and D1 row go with its record after the retention period; a newer process keeps its own", async () => {
    const co = await createCompany();
    const csv = "custom_id;PLZ;Ort\nP-1;10115;Berlin";
    const old = (await upload(co, "/upload/onestep?num_vehicles=1", [{ name: "old orders.csv", body: csv }])).body.process_id as string;
    const final = await waitFinal(co, old);
    expect(final.final.status, JSON.stringify(final)).toBe("finished");
    const objects = async (pid: string) => [
      ...(await env.UPLOADS.list({ prefix: `uploads/${co.id}/${pid}/` })).objects.map((o) => o.key),
      ...((await env.UPLOADS.head(`results/${co.id}/${pid}.csv`)) ? ["result"] : []),
    ];
    const row = async (pid: string) => (await createDb(env.DB).select({ id: processes.id }).from(processes).where(and(eq(processes.company_id, co.id), eq(processes.id, pid)))).length;
    expect(await objects(old)).toEqual([`uploads/${co.id}/${old}/0-old_orders.csv`, "result"]);
    expect(await row(old)).toBe(1);

    const start = Date.now();
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(start + 29 * DAY);
    const fresh = await login(co.slug, co.dispatcher.email, co.dispatcher.password);
    const recent = (await upload(co, "/upload/deliveryonly", [{ name: "recent.csv", body: csv }], undefined, fresh)).body.process_id as string;
    expect(await row(recent)).toBe(1);

    vi.setSystemTime(start + 31 * DAY);
    const coordinator = env.COMPANY.getByName(`company:${co.id}`);
    expect(await runDurableObjectAlarm(coordinator)).toBe(true);
    expect(await objects(old)).toEqual([]);
    expect(await row(old)).toBe(0);
    expect(await coordinator.getProcess(old)).toBeNull();
    expect(await row(recent)).toBe(1);
    expect(await coordinator.getProcess(recent)).not.toBeNull();

    // Through the API on the same (moved) clock: time going back would upset the rate limits' windows.
    const later = await login(co.slug, co.dispatcher.email, co.dispatcher.password);
    expect((await exports.default.fetch(new Request(final.final.link, { headers: { Authorization: `JWT ${later}` } }))).status).toBe(404);
    expect((await co.api("GET", `/process/status/${old}`, { token: later })).status).toBe(404);
    expect((await co.api("GET", `/process/status/${recent}`, { token: later })).body.final.status).toBe("finished");
  });

  it("a one-step upload whose files cannot all be stored answers 500 and leaves no file and no process behind", async () => {
    const co = await createCompany();
    let puts = 0;
    const flaky = {
      put: async (key: string, value: Uint8Array) => {
        if (++puts === 2) throw new Error("R2 is unavailable");
        return env.UPLOADS.put(key, value);
      },
      delete: (keys: string | string[]) => env.UPLOADS.delete(keys),
    };
    const form = new FormData();
    for (const name of ["a.csv", "b.csv", "c.csv"]) form.append("file[]", new File(["custom_id;PLZ;Ort\nF-1;10115;Berlin"], name));
    const request = new Request(`${ORIGIN}/${co.slug}/api/upload/onestep?num_vehicles=1`, { method: "POST", headers: { Authorization: `JWT ${co.dispatcher.token}` }, body: form });
    const res = await worker.fetch(request, { ...env, UPLOADS: flaky } as never, createExecutionContext());
    expect(res.status).toBe(500);
    expect(puts).toBe(3);
    expect((await env.UPLOADS.list({ prefix: `uploads/${co.id}/` })).objects).toEqual([]);
    expect(await createDb(env.DB).select({ id: processes.id }).from(processes).where(eq(processes.company_id, co.id))).toEqual([]);
  });

  it("rejects uploads without files, with unreadable files, and from watchers", async () => {
    const co = await createCompany();
    expect((await upload(co, "/upload/deliveryonly", [])).status).toBe(422);
    const broken = await upload(co, "/upload/deliveryonly", [{ name: "x.xlsx", body: "PK\u0003\u0004 not really" }]);
    expect(broken.status).toBe(422);
    expect(broken.body.fields).toBe("file[]");
    expect((await upload(co, "/upload/deliveryonly", [{ name: "old.xls", body: "\u00d0\u00cf\u0011\u00e0" }])).status).toBe(422);
    // More files than one upload takes: refused before any is read, nothing created.
    const many = Array.from({ length: 21 }, (_, i) => ({ name: `d${i}.csv`, body: "name,street\nA,Hauptstr. 1" }));
    const tooMany = await upload(co, "/upload/deliveryonly", many);
    expect(tooMany).toMatchObject({ status: 422, body: { fields: "file[]" } });
    expect(tooMany.body.message).toContain("At most 20 files");
    expect((await co.api("GET", "/delivery")).body.num_results).toBe(0);
    const watcher = await co.user("watcher");
    const form = new FormData();
    form.append("file[]", new File(["a,b\n1,2"], "x.csv"));
    const res = await exports.default.fetch(new Request(`${ORIGIN}/${co.slug}/api/upload/deliveryonly`, { method: "POST", headers: { Authorization: `JWT ${watcher.token}` }, body: form }));
    expect(res.status).toBe(403);
  });
});
