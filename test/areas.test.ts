/** Postal-code areas, the point lookup, tour areas and the operator's polygon import, through the HTTP interface. */
import { bbox } from "@turf/bbox";
import { booleanPointInPolygon } from "@turf/boolean-point-in-polygon";
import type { MultiPolygon, Polygon, Position } from "geojson";
import { beforeAll, describe, expect, it } from "vitest";
import { OPERATOR, type TestCompany, call, createCompany } from "./helpers";

const q = (query: object) => `q=${encodeURIComponent(JSON.stringify(query))}`;
const byPlz = (plz: string) => q({ filters: [{ name: "plz", op: "==", val: plz }] });

/** A point strictly inside a convex polygon (Voronoi cells are convex): the mean of its outer ring's vertices. */
function interiorPoint(geom: Polygon | MultiPolygon): Position {
  const ring = geom.type === "Polygon" ? geom.coordinates[0] : geom.coordinates[0][0];
  const pts = ring.slice(0, -1);
  return [pts.reduce((s, p) => s + p[0], 0) / pts.length, pts.reduce((s, p) => s + p[1], 0) / pts.length];
}

async function plzArea(co: TestCompany, plz: string) {
  const res = await co.api("GET", `/plzarea?${byPlz(plz)}`);
  expect(res.status).toBe(200);
  expect(res.body.num_results).toBe(1);
  return res.body.objects[0] as { gid: number; plz: string; note: string | null; area_id: number | null; geom: Polygon | MultiPolygon };
}

const square = (lng: number, lat: number, half: number): Polygon => ({
  type: "Polygon",
  coordinates: [
    [
      [lng - half, lat - half],
      [lng + half, lat - half],
      [lng + half, lat + half],
      [lng - half, lat + half],
      [lng - half, lat - half],
    ],
  ],
});

describe("GET /areaforpoint", () => {
  let co: TestCompany;
  beforeAll(async () => {
    co = await createCompany();
  });

  it("Munich centre (11.5755, 48.1374) lies in an 80xxx area, with its polygon", async () => {
    const res = await co.api("GET", "/areaforpoint?lat=48.1374&lon=11.5755");
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    expect(res.body.plz).toMatch(/^80\d{3}$/);
    expect(res.body.plz).toBe("80331");
    expect(res.body.plzarea_id).toBe((await plzArea(co, "80331")).gid);
    expect(res.body.area_id).toBeNull();
    expect(booleanPointInPolygon([11.5755, 48.1374], res.body.geom)).toBe(true);
  });

  it("Berlin Mitte (13.405, 52.52) lies in a 101xx area", async () => {
    const res = await co.api("GET", "/areaforpoint?lat=52.52&lon=13.405");
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    expect(res.body.plz).toMatch(/^101\d\d$/);
  });

  it("a point in the North Sea answers 200 with success false and nulls", async () => {
    const res = await co.api("GET", "/areaforpoint?lat=54.5&lon=4.0");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: false, plzarea_id: null, plz: null, geom: null, area_id: null });
  });

  it("missing, non-numeric or out-of-range coordinates -> 422 naming the parameter", async () => {
    const missing = await co.api("GET", "/areaforpoint?lon=11.5");
    expect(missing.status).toBe(422);
    expect(missing.body.fields).toBe("lat");
    const empty = await co.api("GET", "/areaforpoint?lat=&lon=11.5");
    expect(empty.status).toBe(422);
    expect(empty.body.fields).toBe("lat");
    const text = await co.api("GET", "/areaforpoint?lat=48.1&lon=east");
    expect(text.status).toBe(422);
    expect(text.body.fields).toBe("lon");
    const range = await co.api("GET", "/areaforpoint?lat=91&lon=11.5");
    expect(range.status).toBe(422);
    expect(range.body.fields).toBe("lat");
    const lonRange = await co.api("GET", "/areaforpoint?lat=48&lon=-180.5");
    expect(lonRange.status).toBe(422);
    expect(lonRange.body.fields).toBe("lon");
  });
});

describe("GET /plzarea and /plzareas", () => {
  let co: TestCompany;
  beforeAll(async () => {
    co = await createCompany();
  });

  it("pages hold at most 10 areas, even when more are asked for", async () => {
    const first = await co.api("GET", "/plzarea?results_per_page=50");
    expect(first.status).toBe(200);
    expect(first.body.objects).toHaveLength(10);
    expect(first.body.page).toBe(1);
    expect(first.body.num_results).toBeGreaterThan(8100);
    expect(first.body.total_pages).toBe(Math.ceil(first.body.num_results / 10));
    const second = await co.api("GET", "/plzarea?page=2");
    expect(second.body.objects).toHaveLength(10);
    expect(second.body.objects[0].gid).toBeGreaterThan(first.body.objects[9].gid);
    const five = await co.api("GET", "/plzarea?results_per_page=5");
    expect(five.body.objects).toHaveLength(5);
    expect(five.body.total_pages).toBe(Math.ceil(first.body.num_results / 5));
  });

  it("filters by plz: one area with its place name, polygon and no tour area", async () => {
    const area = await plzArea(co, "80331");
    expect(area).toMatchObject({ plz: "80331", note: "München", area_id: null });
    expect(area.geom.type).toBe("Polygon");
    const prefix = await co.api("GET", `/plzarea?${q({ filters: [{ name: "plz", op: "like", val: "8033%" }], order_by: [{ field: "plz" }] })}`);
    expect(prefix.status).toBe(200);
    expect(prefix.body.objects.map((o: { plz: string }) => o.plz)).toEqual(["80331", "80333", "80335", "80336", "80337", "80339"]);
  });

  it("unknown filter field -> 422 naming it; page 0 -> 422", async () => {
    const res = await co.api("GET", `/plzarea?${q({ filters: [{ name: "geom", op: "==", val: "x" }] })}`);
    expect(res.status).toBe(422);
    expect(res.body.fields).toBe("geom");
    expect((await co.api("GET", "/plzarea?page=0")).status).toBe(422);
  });

  it("GET /plzareas lists every postal code with its area id and no geometry", async () => {
    const res = await co.api("GET", "/plzareas");
    expect(res.status).toBe(200);
    expect(res.body.length).toBeGreaterThan(8100);
    const entry = res.body.find((e: { plz: string }) => e.plz === "80331");
    expect(entry).toEqual({ plz: "80331", gid: (await plzArea(co, "80331")).gid, area_id: null });
  });
});

describe("tour areas", () => {
  let co: TestCompany;
  let other: TestCompany;
  let areaId: number;
  let munich: Awaited<ReturnType<typeof plzArea>>;
  let munich2: Awaited<ReturnType<typeof plzArea>>;

  beforeAll(async () => {
    co = await createCompany();
    other = await createCompany();
    munich = await plzArea(co, "80331");
    munich2 = await plzArea(co, "80333");
  });

  it("POST /areafromplz creates the tour area: union MultiPolygon, members, 200", async () => {
    const res = await co.api("POST", "/areafromplz", { body: { plz_list: ["80333", "80331"], areaname: "Munich centre" } });
    expect(res.status).toBe(200);
    areaId = res.body.id;
    expect(areaId).toBeGreaterThan(0);
    expect(res.body.areaname).toBe("Munich centre");
    expect(res.body.driver_id).toBeNull();
    expect(res.body.geom.type).toBe("MultiPolygon");
    for (const member of [munich, munich2]) expect(booleanPointInPolygon(interiorPoint(member.geom), res.body.geom)).toBe(true);
    expect(booleanPointInPolygon([11.5755, 48.1374], res.body.geom)).toBe(true);
    const [minLng, minLat, maxLng, maxLat] = bbox(res.body.geom);
    for (const member of [munich, munich2]) {
      const [a, b, c, d] = bbox(member.geom);
      expect(minLng).toBeLessThanOrEqual(a);
      expect(minLat).toBeLessThanOrEqual(b);
      expect(maxLng).toBeGreaterThanOrEqual(c);
      expect(maxLat).toBeGreaterThanOrEqual(d);
    }
    expect(res.body.plzareas).toEqual({
      num_results: 2,
      objects: [
        { gid: munich.gid, plz: "80331", note: "München", area_id: areaId },
        { gid: munich2.gid, plz: "80333", note: "München", area_id: areaId },
      ],
      page: 1,
      total_pages: 1,
    });
  });

  it("GET /tourarea/{id} and the list answer the same tour area", async () => {
    const one = await co.api("GET", `/tourarea/${areaId}`);
    expect(one.status).toBe(200);
    expect(one.body.id).toBe(areaId);
    expect(one.body.plzareas.num_results).toBe(2);
    const list = await co.api("GET", "/tourarea");
    expect(list.status).toBe(200);
    expect(list.body.num_results).toBe(1);
    expect(list.body.objects[0]).toEqual(one.body);
    const filtered = await co.api("GET", `/tourarea?${q({ filters: [{ name: "plzareas", op: "any", val: { name: "plz", op: "==", val: "80331" } }] })}`);
    expect(filtered.body.objects.map((o: { id: number }) => o.id)).toEqual([areaId]);
    const none = await co.api("GET", `/tourarea?${q({ filters: [{ name: "plzareas", op: "any", val: { name: "plz", op: "==", val: "10115" } }] })}`);
    expect(none.body.num_results).toBe(0);
  });

  it("plzarea area_id reflects the membership and is filterable", async () => {
    expect((await plzArea(co, "80331")).area_id).toBe(areaId);
    expect((await plzArea(co, "80335")).area_id).toBeNull();
    const inArea = await co.api("GET", `/plzarea?${q({ filters: [{ name: "area_id", op: "==", val: areaId }], order_by: [{ field: "plz", direction: "desc" }] })}`);
    expect(inArea.body.num_results).toBe(2);
    expect(inArea.body.objects.map((o: { plz: string }) => o.plz)).toEqual(["80333", "80331"]);
    const index = await co.api("GET", "/plzareas");
    expect(index.body.filter((e: { area_id: number | null }) => e.area_id === areaId).map((e: { plz: string }) => e.plz)).toEqual(["80331", "80333"]);
    const point = await co.api("GET", "/areaforpoint?lat=48.1374&lon=11.5755");
    expect(point.body.area_id).toBe(areaId);
  });

  it("unknown postal codes -> 422 naming plz_list and listing them; nothing created", async () => {
    const res = await co.api("POST", "/areafromplz", { body: { plz_list: ["80335", "00000", "ABCDE"], areaname: "Nowhere" } });
    expect(res.status).toBe(422);
    expect(res.body.fields).toBe("plz_list");
    expect(res.body.message).toContain("00000");
    expect(res.body.message).toContain("ABCDE");
    expect(res.body.message).not.toContain("80335");
    expect((await co.api("GET", "/tourarea")).body.num_results).toBe(1);
  });

  it("invalid bodies -> 422 (empty plz_list, missing areaname)", async () => {
    const empty = await co.api("POST", "/areafromplz", { body: { plz_list: [], areaname: "x" } });
    expect(empty.status).toBe(422);
    expect(empty.body.fields).toBe("plz_list");
    const noName = await co.api("POST", "/areafromplz", { body: { plz_list: ["80335"] } });
    expect(noName.status).toBe(422);
    expect(noName.body.fields).toBe("areaname");
  });

  it("a postal code already in another tour area -> 409; nothing created", async () => {
    const res = await co.api("POST", "/areafromplz", { body: { plz_list: ["80335", "80333"], areaname: "Overlap" } });
    expect(res.status).toBe(409);
    expect(res.body.fields).toBe("plz_list");
    expect(res.body.message).toContain(`80333 (tour area ${areaId})`);
    expect((await co.api("GET", "/tourarea")).body.num_results).toBe(1);
    expect((await plzArea(co, "80335")).area_id).toBeNull();
  });

  it("another company's tour areas are separate: same codes allowed, ids answer 404", async () => {
    const mine = await other.api("POST", "/areafromplz", { body: { plz_list: ["80331"], areaname: "Other" } });
    expect(mine.status).toBe(200);
    expect((await plzArea(other, "80333")).area_id).toBeNull();
    expect((await plzArea(other, "80331")).area_id).toBe(mine.body.id);
    expect((await other.api("GET", `/tourarea/${areaId}`)).status).toBe(404);
    expect((await other.api("PATCH", `/tourarea/${areaId}`, { body: { areaname: "stolen" } })).status).toBe(404);
    expect((await other.api("DELETE", `/deletetourarea/${areaId}`)).status).toBe(404);
    expect((await other.api("GET", "/tourarea")).body.objects.map((o: { id: number }) => o.id)).toEqual([mine.body.id]);
    expect((await co.api("GET", `/tourarea/${mine.body.id}`)).status).toBe(404);
    expect((await co.api("GET", `/tourarea/${areaId}`)).body.areaname).toBe("Munich centre");
  });

  it("watchers and drivers may read but get 403 on every mutation", async () => {
    const watcher = await co.user("watcher");
    const driver = await co.user("driver");
    for (const user of [watcher, driver]) {
      expect((await co.api("GET", `/tourarea/${areaId}`, { token: user.token })).status).toBe(200);
      expect((await co.api("GET", "/plzarea", { token: user.token })).status).toBe(200);
      const post = await co.api("POST", "/areafromplz", { token: user.token, body: { plz_list: ["80335"], areaname: "x" } });
      expect(post.status).toBe(403);
      expect(post.body.code).toBe(403);
      expect((await co.api("PATCH", `/tourarea/${areaId}`, { token: user.token, body: { areaname: "x" } })).status).toBe(403);
      expect((await co.api("DELETE", `/deletetourarea/${areaId}`, { token: user.token })).status).toBe(403);
    }
    expect((await co.api("GET", `/tourarea/${areaId}`)).body.areaname).toBe("Munich centre");
  });

  it("PATCH binds a driver of the company, rejects others with 422, null unbinds", async () => {
    const driver = await co.user("driver");
    const bound = await co.api("PATCH", `/tourarea/${areaId}`, { body: { driver_id: driver.id, areaname: "Altstadt" } });
    expect(bound.status).toBe(200);
    expect(bound.body).toMatchObject({ id: areaId, driver_id: driver.id, areaname: "Altstadt" });
    expect(bound.body.plzareas.num_results).toBe(2);

    const watcher = await co.user("watcher");
    const foreignDriver = await other.user("driver");
    for (const wrong of [watcher.id, foreignDriver.id, 999_999]) {
      const res = await co.api("PATCH", `/tourarea/${areaId}`, { body: { driver_id: wrong } });
      expect(res.status).toBe(422);
      expect(res.body.fields).toBe("driver_id");
    }
    expect((await co.api("GET", `/tourarea/${areaId}`)).body.driver_id).toBe(driver.id);

    const unbound = await co.api("PATCH", `/tourarea/${areaId}`, { body: { driver_id: null } });
    expect(unbound.status).toBe(200);
    expect(unbound.body.driver_id).toBeNull();
    expect(unbound.body.areaname).toBe("Altstadt");
  });

  it("PATCH with a different id in the body -> 422", async () => {
    const res = await co.api("PATCH", `/tourarea/${areaId}`, { body: { id: areaId + 1, areaname: "x" } });
    expect(res.status).toBe(422);
    expect(res.body.fields).toBe("id");
  });

  it("PATCH membership recomputes geom and frees the dropped codes", async () => {
    const munich3 = await plzArea(co, "80335");
    const res = await co.api("PATCH", `/tourarea/${areaId}`, { body: { plz_list: ["80331", "80335"] } });
    expect(res.status).toBe(200);
    expect(res.body.plzareas.objects.map((o: { plz: string }) => o.plz)).toEqual(["80331", "80335"]);
    expect(booleanPointInPolygon(interiorPoint(munich3.geom), res.body.geom)).toBe(true);
    expect(booleanPointInPolygon(interiorPoint(munich2.geom), res.body.geom)).toBe(false);
    expect((await plzArea(co, "80333")).area_id).toBeNull();
    expect((await plzArea(co, "80335")).area_id).toBe(areaId);

    // plzareas as returned by GET (an envelope of {gid, ...}) round-trips; gids and codes mix.
    const round = await co.api("PATCH", `/tourarea/${areaId}`, { body: { plzareas: { ...res.body.plzareas, objects: [...res.body.plzareas.objects, "80333"] } } });
    expect(round.status).toBe(200);
    expect(round.body.plzareas.objects.map((o: { plz: string }) => o.plz)).toEqual(["80331", "80333", "80335"]);
    const unknownGid = await co.api("PATCH", `/tourarea/${areaId}`, { body: { plzareas: [999_999_999] } });
    expect(unknownGid.status).toBe(422);
    expect(unknownGid.body.fields).toBe("plzareas");
  });

  it("PATCH membership taking another tour area's code -> 409, nothing changes", async () => {
    const second = await co.api("POST", "/areafromplz", { body: { plz_list: ["80336"], areaname: "South" } });
    expect(second.status).toBe(200);
    const res = await co.api("PATCH", `/tourarea/${second.body.id}`, { body: { plz_list: ["80336", "80331"] } });
    expect(res.status).toBe(409);
    expect((await co.api("GET", `/tourarea/${second.body.id}`)).body.plzareas.objects.map((o: { plz: string }) => o.plz)).toEqual(["80336"]);
    expect((await co.api("DELETE", `/deletetourarea/${second.body.id}`)).status).toBe(200);
  });

  it("PATCH geom sets the geometry directly (as MultiPolygon); invalid geometry -> 422", async () => {
    const custom = square(11.57, 48.14, 0.01);
    const res = await co.api("PATCH", `/tourarea/${areaId}`, { body: { geom: custom } });
    expect(res.status).toBe(200);
    expect(res.body.geom).toEqual({ type: "MultiPolygon", coordinates: [custom.coordinates] });
    expect(res.body.plzareas.num_results).toBe(3);
    const bad = await co.api("PATCH", `/tourarea/${areaId}`, { body: { geom: { type: "Polygon", coordinates: [[[11, 48], [12, 48]]] } } });
    expect(bad.status).toBe(422);
    expect(bad.body.fields).toBe("geom");
  });

  it("DELETE answers the deleted tour area and frees its postal codes", async () => {
    const res = await co.api("DELETE", `/deletetourarea/${areaId}`);
    expect(res.status).toBe(200);
    expect(res.body.id).toBe(areaId);
    expect(res.body.areaname).toBe("Altstadt");
    expect(res.body.plzareas.objects.map((o: { plz: string }) => o.plz)).toEqual(["80331", "80333", "80335"]);
    expect((await co.api("GET", `/tourarea/${areaId}`)).status).toBe(404);
    expect((await co.api("DELETE", `/deletetourarea/${areaId}`)).status).toBe(404);
    expect((await plzArea(co, "80331")).area_id).toBeNull();
    expect((await co.api("GET", "/tourarea")).body.num_results).toBe(0);
    const again = await co.api("POST", "/areafromplz", { body: { plz_list: ["80331"], areaname: "Again" } });
    expect(again.status).toBe(200);
  });
});

describe("POST /_operator/postal-areas", () => {
  const featureCollection = (features: object[]) => ({ type: "FeatureCollection", features });
  const feature = (properties: object, geometry: object) => ({ type: "Feature", properties, geometry });

  it("needs the operator token", async () => {
    const body = featureCollection([feature({ plz: "99999" }, square(-30, 45, 0.1))]);
    expect((await call("POST", "/_operator/postal-areas", { body })).status).toBe(403);
    expect((await call("POST", "/_operator/postal-areas", { body, headers: { Authorization: "Bearer wrong" } })).status).toBe(403);
  });

  it("imports a square for a fake code 99999 that areaforpoint then finds", async () => {
    const co = await createCompany();
    const before = await co.api("GET", "/areaforpoint?lat=45&lon=-30");
    expect(before.body.success).toBe(false);
    const res = await call("POST", "/_operator/postal-areas", {
      headers: OPERATOR,
      body: featureCollection([feature({ plz: "99999", note: "Testfeld" }, square(-30, 45, 0.1))]),
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ imported: 1, replaced: 0, kept: 0, tour_areas_updated: 0 });
    const found = await co.api("GET", "/areaforpoint?lat=45.05&lon=-29.95");
    expect(found.body).toMatchObject({ success: true, plz: "99999", area_id: null });
    expect(found.body.geom).toEqual(square(-30, 45, 0.1));
    const area = await plzArea(co, "99999");
    expect(area).toMatchObject({ gid: found.body.plzarea_id, note: "Testfeld" });
    const source = await co.api("GET", `/plzarea?${q({ filters: [{ name: "source", op: "==", val: "imported" }] })}`);
    expect(source.body.num_results).toBe(1);
    expect((await co.api("GET", "/areaforpoint?lat=45.2&lon=-30")).body.success).toBe(false);

    // Re-importing the code supersedes the earlier import; `postcode` is accepted, open rings are closed.
    const open = square(-30, 45, 0.2);
    open.coordinates[0].pop();
    const again = await call("POST", "/_operator/postal-areas", { headers: OPERATOR, body: featureCollection([feature({ postcode: 99999 }, open)]) });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ imported: 1, replaced: 1, kept: 0 });
    expect((await co.api("GET", "/areaforpoint?lat=45.15&lon=-30")).body).toMatchObject({ success: true, plz: "99999" });
    expect((await co.api("GET", `/plzarea?${byPlz("99999")}`)).body.num_results).toBe(1);
  });

  it("invalid features -> 422 naming them; nothing imported", async () => {
    const res = await call("POST", "/_operator/postal-areas", {
      headers: OPERATOR,
      body: featureCollection([
        feature({ plz: "99990" }, square(-20, 40, 0.1)),
        feature({ name: "no code" }, square(-20, 41, 0.1)),
        feature({ plz: "99991" }, { type: "Point", coordinates: [1, 2] }),
        feature({ plz: "99992" }, { type: "Polygon", coordinates: [[[-20, 42], [-19, 200], [-19, 43], [-20, 42]]] }),
      ]),
    });
    expect(res.status).toBe(422);
    expect(res.body.fields).toBe("features.1.properties.plz,features.2.geometry,features.3.geometry");
    const co = await createCompany();
    expect((await co.api("GET", "/areaforpoint?lat=40&lon=-20")).body.success).toBe(false);
    const notCollection = await call("POST", "/_operator/postal-areas", { headers: OPERATOR, body: { type: "Feature" } });
    expect(notCollection.status).toBe(422);
  });

  it("an import of a code in a tour area moves the membership and recomputes the tour area", async () => {
    const co = await createCompany();
    const created = await co.api("POST", "/areafromplz", { body: { plz_list: ["10115", "10117"], areaname: "Mitte" } });
    expect(created.status).toBe(200);
    const old10115 = await plzArea(co, "10115");
    const replacement = square(13.38, 52.53, 0.002);
    const res = await call("POST", "/_operator/postal-areas", { headers: OPERATOR, body: featureCollection([feature({ PLZ: "10115", note: "Berlin" }, replacement)]) });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ imported: 1, replaced: 1, kept: 0, tour_areas_updated: 1 });
    const fresh = await plzArea(co, "10115");
    expect(fresh.gid).not.toBe(old10115.gid);
    expect(fresh.area_id).toBe(created.body.id);
    const area = await co.api("GET", `/tourarea/${created.body.id}`);
    expect(area.body.plzareas.objects.map((o: { gid: number; plz: string }) => [o.plz, o.gid])).toEqual([
      ["10115", fresh.gid],
      ["10117", (await plzArea(co, "10117")).gid],
    ]);
    expect(booleanPointInPolygon([13.38, 52.53], area.body.geom)).toBe(true);
    // Part of the old Voronoi cell outside the new square is no longer covered.
    const oldOnly = interiorPoint(old10115.geom);
    if (!booleanPointInPolygon(oldOnly, replacement) && !booleanPointInPolygon(oldOnly, (await plzArea(co, "10117")).geom))
      expect(booleanPointInPolygon(oldOnly, area.body.geom)).toBe(false);
  });

  it("replace=true removes the derived areas not used by tour areas, keeps used ones", async () => {
    const co = await createCompany();
    const used = await co.api("POST", "/areafromplz", { body: { plz_list: ["80337"], areaname: "Kept" } });
    expect(used.status).toBe(200);
    const before = (await co.api("GET", "/plzarea")).body.num_results;
    const res = await call("POST", "/_operator/postal-areas?replace=true", {
      headers: OPERATOR,
      body: featureCollection([feature({ plz: "80339", note: "München" }, square(11.54, 48.14, 0.005))]),
    });
    expect(res.status).toBe(200);
    expect(res.body.imported).toBe(1);
    // Derived areas still in tour areas of this file's companies: 80331, 10117 (earlier tests) and 80337.
    expect(res.body.kept).toBe(3);
    expect(res.body.tour_areas_updated).toBe(0);
    const after = await co.api("GET", `/plzarea?${q({ filters: [{ name: "source", op: "==", val: "derived" }], order_by: [{ field: "plz" }] })}`);
    expect(after.body.objects.map((o: { plz: string }) => o.plz)).toEqual(["10117", "80331", "80337"]);
    expect(after.body.objects[2].area_id).toBe(used.body.id);
    const total = (await co.api("GET", "/plzarea")).body.num_results;
    expect(res.body.replaced).toBe(before + 1 - total);
    expect(res.body.replaced).toBeGreaterThan(8000);
    expect((await co.api("GET", "/areaforpoint?lat=53.5503&lon=9.9927")).body.success).toBe(false);
    expect((await co.api("GET", "/areaforpoint?lat=48.14&lon=11.54")).body.plz).toBe("80339");
  });
});

describe("OpenAPI document", () => {
  it("declares every area endpoint once, with its roles", async () => {
    const res = await call("GET", "/openapi.json");
    expect(res.status).toBe(200);
    const paths = res.body.paths;
    expect(Object.keys(paths["/{slug}/api/plzarea"])).toEqual(["get"]);
    expect(Object.keys(paths["/{slug}/api/plzareas"])).toEqual(["get"]);
    expect(Object.keys(paths["/{slug}/api/areaforpoint"])).toEqual(["get"]);
    expect(Object.keys(paths["/{slug}/api/areafromplz"])).toEqual(["post"]);
    expect(Object.keys(paths["/{slug}/api/tourarea"])).toEqual(["get"]);
    expect(Object.keys(paths["/{slug}/api/tourarea/{tourarea_id}"]).sort()).toEqual(["get", "patch"]);
    expect(Object.keys(paths["/{slug}/api/deletetourarea/{tourarea_id}"])).toEqual(["delete"]);
    expect(Object.keys(paths["/_operator/postal-areas"])).toEqual(["post"]);
    expect(paths["/{slug}/api/plzareas"].get.description).toContain("unpaginated list of every postal-code area");
    expect(paths["/{slug}/api/areaforpoint"].get.parameters.map((p: { name: string }) => p.name)).toEqual(["slug", "lat", "lon", "lng"]);
  });
});
