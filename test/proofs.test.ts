import { createScheduledController, env } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import worker from "../src/worker/index";
import { FAR_FROM_ADDRESS_METERS, PROOF_LIMITS } from "../src/core/services/proofs";
import { ORIGIN, OPERATOR, type TestCompany, call, createCompany, insertAddress, routeAndStart, tomorrowAt } from "./helpers";

const DAY = 86_400_000;
const DEST = { lng: 13.42, lat: 52.5 };

/** A 1 x 1 PNG. */
const PNG = Uint8Array.from(atob("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="), (ch) => ch.charCodeAt(0));

/** A JPEG's structure as a phone writes it: an EXIF APP1 with a GPS position, a frame of 640 x 480, a scan. */
function jpegWithGps(): Uint8Array {
  const exif = [..."Exif\0\0MM\0*GPSLatitude=52.5000N;GPSLongitude=13.4200E"].map((c) => c.charCodeAt(0));
  const app1 = [0xff, 0xe1, 0, exif.length + 2, ...exif];
  const sof = [0xff, 0xc0, 0, 17, 8, 0x01, 0xe0, 0x02, 0x80, 3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1];
  const sos = [0xff, 0xda, 0, 12, 3, 1, 0, 2, 0x11, 3, 0x11, 0, 0x3f, 0];
  return Uint8Array.from([0xff, 0xd8, ...app1, ...sof, ...sos, 0x12, 0x34, 0x56, 0x78, 0xff, 0xd9]);
}

const text = (b: Uint8Array) => String.fromCharCode(...b);

async function upload(co: TestCompany, deliveryId: number, token: string, parts: Record<string, Blob | string>) {
  const form = new FormData();
  for (const [k, v] of Object.entries(parts)) form.append(k, v as Blob, v instanceof Blob ? `${k}.bin` : undefined);
  const response = await exports.default.fetch(new Request(`${ORIGIN}/${co.slug}/api/delivery/${deliveryId}/proof`, { method: "POST", headers: { Authorization: `JWT ${token}` }, body: form }));
  const raw = await response.text();
  return { status: response.status, body: raw ? JSON.parse(raw) : undefined };
}

async function getBytes(path: string, token?: string) {
  const response = await exports.default.fetch(new Request(`${ORIGIN}${path}`, { headers: token ? { Authorization: `JWT ${token}` } : {} }));
  return { status: response.status, type: response.headers.get("content-type"), cache: response.headers.get("cache-control"), bytes: new Uint8Array(await response.arrayBuffer()) };
}

/** A started route with one delivery whose parcel carries `PARCEL-1`. */
async function onTheWay(co?: TestCompany) {
  co ??= await createCompany();
  const address = await insertAddress(co.id, DEST);
  const created = await co.api("POST", "/delivery", { body: { deliverylocation_id: address, pdt_from: tomorrowAt(6), pdt_to: tomorrowAt(20), scancode: "PARCEL-1" } });
  const { driver, routeId } = await routeAndStart(co, [created.body.id]);
  return { co, driver, routeId, deliveryId: created.body.id as number };
}

const proofEvents = async (companyId: number) =>
  (await env.DB.prepare("SELECT payload FROM events WHERE company_id = ? AND type = 'delivery.updated' ORDER BY id").bind(companyId).all<{ payload: string }>()).results.map((r) => JSON.parse(r.payload));

const r2Keys = async (companyId: number) => (await env.UPLOADS.list({ prefix: `proofs/${companyId}/` })).objects.map((o) => o.key);

afterEach(() => vi.useRealTimers());

describe("proof of delivery", () => {
  it("a driver reports with photo, signature, recipient, position and scan; location metadata never reaches storage; the event says a proof exists", async () => {
    const { co, driver, deliveryId } = await onTheWay();
    const sent = await upload(co, deliveryId, driver.token, { photo: new Blob([jpegWithGps()], { type: "image/jpeg" }), signature: new Blob([PNG], { type: "image/png" }) });
    expect(sent.status).toBe(200);
    expect(sent.body).toMatchObject({ delivery_id: deliveryId, photo: { type: "image/jpeg", width: 640, height: 480 }, signature: { type: "image/png" } });
    expect(sent.body.photo.url).toBe(`${ORIGIN}/${co.slug}/api/delivery/${deliveryId}/proof/${sent.body.id}/photo`);
    // Position 50 m north of the address; the scanned code is another parcel's.
    const reported = await co.api("POST", `/deliverydone/${deliveryId}`, {
      token: driver.token,
      body: { status: "delivered", recipient: "  Ms Neighbour ", position: { lat: DEST.lat + 0.00045, lng: DEST.lng, accuracy: 12 }, scancode: "PARCEL-2" },
    });
    expect(reported.status).toBe(200);
    const list = await co.api("GET", `/delivery/${deliveryId}/proof`);
    expect(list.status).toBe(200);
    expect(list.body.num_results).toBe(1);
    const proof = list.body.objects[0];
    expect(proof).toMatchObject({ id: sent.body.id, recipient: "Ms Neighbour", far_from_address: false, scanned_code: "PARCEL-2", scan_match: false, position: { accuracy: 12 }, driver_id: driver.id });
    expect(proof.distance_m).toBeGreaterThan(45);
    expect(proof.distance_m).toBeLessThan(55);
    const photo = await getBytes(new URL(proof.photo.url).pathname, co.dispatcher.token);
    expect(photo.status).toBe(200);
    expect(photo.type).toBe("image/jpeg");
    expect(photo.cache).toBe("private, no-store");
    expect(text(photo.bytes)).not.toContain("GPS");
    const exifSegment = 4 + "Exif\0\0MM\0*GPSLatitude=52.5000N;GPSLongitude=13.4200E".length;
    expect(photo.bytes.length).toBe(jpegWithGps().length - exifSegment);
    expect([...photo.bytes.slice(0, 2)]).toEqual([0xff, 0xd8]);
    const events = await proofEvents(co.id);
    const last = events.at(-1);
    expect(last).toMatchObject({ type: "delivery", id: deliveryId, status: 2, proof: { photo: true, signature: true, recipient: true, far_from_address: false, scan_match: false } });
    expect(JSON.stringify(events)).not.toContain("Neighbour");
    // The operator's usage counts the proof and its images as stored (the photo without its EXIF), no one else's.
    const usage = async (slug: string) => (await call("GET", `/_operator/companies/${slug}/usage`, { headers: OPERATOR })).body.proofs;
    expect(await usage(co.slug)).toEqual({ records: 1, image_bytes: photo.bytes.length + PNG.length });
    expect(await usage((await createCompany()).slug)).toEqual({ records: 0, image_bytes: 0 });
    // The route finished with this report; deleting the delivery takes its proof and images along.
    expect(await r2Keys(co.id)).toHaveLength(2);
    const q = encodeURIComponent(JSON.stringify({ filters: [{ name: "id", op: "==", val: deliveryId }] }));
    expect((await co.api("DELETE", `/delivery?q=${q}`)).body.num_deleted).toBe(1);
    expect(await r2Keys(co.id)).toEqual([]);
    expect((await env.DB.prepare("SELECT count(*) AS n FROM delivery_proofs WHERE company_id = ?").bind(co.id).first<{ n: number }>())!.n).toBe(0);
    expect(await usage(co.slug)).toEqual({ records: 0, image_bytes: 0 });
  });

  it("a report far from the address is flagged; an offline report keeps its own time, but not one in the future", async () => {
    const { co, driver, deliveryId } = await onTheWay();
    const future = await co.api("POST", `/deliverydone/${deliveryId}`, { token: driver.token, body: { status: "delivered", reported_at: new Date(Date.now() + 10 * 60_000).toISOString() } });
    expect(future.status).toBe(422);
    expect(future.body.fields).toBe("reported_at");
    expect((await co.api("GET", `/delivery/${deliveryId}`)).body.status).toBe(1);
    const earlier = new Date(Date.now() - 60_000).toISOString().replace(/\.\d+Z$/, "Z");
    const reported = await co.api("POST", `/deliverydone/${deliveryId}`, { token: driver.token, body: { status: "undelivered", reported_at: earlier, position: { lat: DEST.lat + 0.009, lng: DEST.lng } } });
    expect(reported.status).toBe(200);
    expect(reported.body.atd).toBe(earlier);
    const [proof] = (await co.api("GET", `/delivery/${deliveryId}/proof`)).body.objects;
    expect(proof.reported_at).toBe(earlier);
    expect(proof.distance_m).toBeGreaterThan(FAR_FROM_ADDRESS_METERS);
    expect(proof.far_from_address).toBe(true);
    expect(proof.scan_match).toBeNull();
    // A photo sent after the report (the phone was offline) is announced on its own.
    const later = await upload(co, deliveryId, driver.token, { recipient: "Door closed" });
    expect(later.status).toBe(200);
    expect((await proofEvents(co.id)).at(-1)).toMatchObject({ id: deliveryId, status: 3, proof: { recipient: true, far_from_address: true } });
  });

  it("the report's position takes the interface's GeoJSON point (accuracy beside it) as POST /drivertracking does; a mix of both forms is refused", async () => {
    const { co, driver, deliveryId } = await onTheWay();
    const mixed = await co.api("POST", `/deliverydone/${deliveryId}`, { token: driver.token, body: { status: "delivered", position: { type: "Point", lat: DEST.lat, lng: DEST.lng } } });
    expect(mixed.status).toBe(422);
    expect((await co.api("GET", `/delivery/${deliveryId}`)).body.status).toBe(1);
    const point = { type: "Point", coordinates: [DEST.lng, DEST.lat + 0.00045], accuracy: 8 };
    const reported = await co.api("POST", `/deliverydone/${deliveryId}`, { token: driver.token, body: { status: "delivered", position: point } });
    expect(reported.status, reported.text).toBe(200);
    const [proof] = (await co.api("GET", `/delivery/${deliveryId}/proof`)).body.objects;
    // Answered in the shape it was sent (GeoJSON, accuracy beside it), and in the older one (deprecated).
    expect(proof.location).toEqual(point);
    expect(proof.position).toEqual({ lat: DEST.lat + 0.00045, lng: DEST.lng, accuracy: 8 });
    expect(proof.distance_m).toBeGreaterThan(45);
    expect(proof.distance_m).toBeLessThan(55);
  });

  it("checks the real bytes: a non-image is a 422, a file over the limit a 413, and nothing is stored", async () => {
    const { co, driver, deliveryId } = await onTheWay();
    const fake = await upload(co, deliveryId, driver.token, { photo: new Blob(["<html>not a picture</html>"], { type: "image/jpeg" }) });
    expect(fake.status).toBe(422);
    expect(fake.body.fields).toBe("photo");
    const big = new Uint8Array(PROOF_LIMITS.photoBytes + 1);
    big.set(jpegWithGps());
    const tooBig = await upload(co, deliveryId, driver.token, { photo: new Blob([big], { type: "image/jpeg" }) });
    expect(tooBig.status).toBe(413);
    const truncated = await upload(co, deliveryId, driver.token, { signature: new Blob([PNG.slice(0, 30)], { type: "image/png" }) });
    expect(truncated.status).toBe(422);
    expect(truncated.body.fields).toBe("signature");
    const empty = await upload(co, deliveryId, driver.token, {});
    expect(empty.status).toBe(422);
    expect((await co.api("GET", `/delivery/${deliveryId}/proof`)).body.num_results).toBe(0);
    expect(await r2Keys(co.id)).toEqual([]);
  });

  it("watchers view, drivers only their own routes, other companies never; only dispatchers delete, and the deletion is logged", async () => {
    const { co, driver, deliveryId } = await onTheWay();
    const sent = await upload(co, deliveryId, driver.token, { photo: new Blob([PNG], { type: "image/png" }), recipient: "Mr Door" });
    expect(sent.status).toBe(200);
    const photoPath = `/${co.slug}/api/delivery/${deliveryId}/proof/${sent.body.id}/photo`;
    const watcher = await co.user("watcher");
    expect((await co.api("GET", `/delivery/${deliveryId}/proof`, { token: watcher.token })).body.num_results).toBe(1);
    expect((await getBytes(photoPath, watcher.token)).status).toBe(200);
    expect((await getBytes(photoPath, driver.token)).status).toBe(200);
    expect((await upload(co, deliveryId, watcher.token, { recipient: "x" })).status).toBe(403);
    const otherDriver = await co.user("driver");
    expect((await co.api("GET", `/delivery/${deliveryId}/proof`, { token: otherDriver.token })).status).toBe(403);
    expect((await getBytes(photoPath, otherDriver.token)).status).toBe(403);
    expect((await upload(co, deliveryId, otherDriver.token, { recipient: "x" })).status).toBe(403);
    expect((await getBytes(photoPath)).status).toBe(403);
    const other = await createCompany();
    expect((await call("GET", `/${other.slug}/api/delivery/${deliveryId}/proof`, { token: other.dispatcher.token })).status).toBe(404);
    expect((await getBytes(`/${other.slug}/api/delivery/${deliveryId}/proof/${sent.body.id}/photo`, other.dispatcher.token)).status).toBe(404);
    expect((await call("GET", `/${co.slug}/api/delivery/${deliveryId}/proof`, { token: other.dispatcher.token })).status).toBe(403);

    expect((await co.api("DELETE", `/delivery/${deliveryId}/proof/${sent.body.id}`, { token: driver.token })).status).toBe(403);
    expect((await co.api("DELETE", `/delivery/${deliveryId}/proof/${sent.body.id}`, { token: watcher.token })).status).toBe(403);
    expect(await r2Keys(co.id)).toHaveLength(1);
    const gone = await co.api("DELETE", `/delivery/${deliveryId}/proof/${sent.body.id}`);
    expect(gone.status).toBe(204);
    expect((await co.api("GET", `/delivery/${deliveryId}/proof`)).body.num_results).toBe(0);
    expect(await r2Keys(co.id)).toEqual([]);
    expect((await getBytes(photoPath, co.dispatcher.token)).status).toBe(404);
    const dispatcherId = (await co.api("GET", "/dispatcher")).body.objects[0].id;
    expect((await proofEvents(co.id)).at(-1)).toMatchObject({ id: deliveryId, proof: null, proof_deleted: { id: sent.body.id, by: dispatcherId } });
    expect((await co.api("DELETE", `/delivery/${deliveryId}/proof/${sent.body.id}`)).status).toBe(404);
  });

  it("the customer's tracking page shows photo and signature only when the company enables it, through expiring signed links", async () => {
    const { co, driver, deliveryId } = await onTheWay();
    await upload(co, deliveryId, driver.token, { photo: new Blob([jpegWithGps()], { type: "image/jpeg" }), signature: new Blob([PNG], { type: "image/png" }) });
    await co.api("POST", `/deliverydone/${deliveryId}`, { token: driver.token, body: { status: "delivered", recipient: "Ms Neighbour" } });
    const { link } = (await co.api("POST", `/delivery/${deliveryId}/trackinglink`)).body;
    const page = () => call("GET", link.slice(ORIGIN.length));
    const json = () => call("GET", link.slice(ORIGIN.length).replace("/t/", "/track/"));
    expect((await json()).body.proof).toMatchObject({ notes: null });
    expect((await json()).body.proof.photo_url).toBeUndefined();
    expect((await page()).text).not.toContain("<img");

    expect((await call("PATCH", `/_operator/companies/${co.slug}`, { headers: OPERATOR, body: { proof_on_tracking_page: true } })).body.proof_on_tracking_page).toBe(true);
    const shown = await page();
    expect(shown.text).toContain("Entgegengenommen von Ms Neighbour");
    expect(shown.headers.get("content-security-policy")).toContain(`img-src data: ${ORIGIN}`);
    const { proof } = (await json()).body;
    expect(proof.photo_url).toMatch(new RegExp(`^${ORIGIN}/${co.slug}/proofimage/\\d+/photo\\?expires=\\d+&sig=[0-9a-f]{64}$`));
    expect(shown.text).toContain(`src="${proof.photo_url.replace(/&/g, "&amp;")}"`);
    const photo = await getBytes(new URL(proof.photo_url).pathname + new URL(proof.photo_url).search);
    expect(photo.status).toBe(200);
    expect(text(photo.bytes)).not.toContain("GPS");
    const signature = await getBytes(proof.signature_url.slice(ORIGIN.length));
    expect(signature.type).toBe("image/png");
    // Altered: another image of the same link, another signature, or another company's slug.
    expect((await getBytes(proof.photo_url.slice(ORIGIN.length).replace("/photo?", "/signature?"))).status).toBe(404);
    // One hex digit changed (to another digit: "0" would leave a signature that starts with "0" unchanged).
    const altered = proof.photo_url.slice(ORIGIN.length).replace(/sig=(.)/, (_: string, d: string) => `sig=${d === "0" ? "1" : "0"}`);
    expect((await getBytes(altered)).status).toBe(404);
    const other = await createCompany();
    expect((await getBytes(proof.photo_url.slice(ORIGIN.length).replace(`/${co.slug}/`, `/${other.slug}/`))).status).toBe(404);
    // Turned off: links already handed out stop working; on again, they work.
    await call("PATCH", `/_operator/companies/${co.slug}`, { headers: OPERATOR, body: { proof_on_tracking_page: false } });
    expect((await getBytes(proof.photo_url.slice(ORIGIN.length))).status).toBe(404);
    await call("PATCH", `/_operator/companies/${co.slug}`, { headers: OPERATOR, body: { proof_on_tracking_page: true } });
    expect((await getBytes(proof.photo_url.slice(ORIGIN.length))).status).toBe(200);
    // Expired: 16 minutes later (last: the clock only moves forward in this test).
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.now() + 16 * 60_000);
    expect((await getBytes(proof.photo_url.slice(ORIGIN.length))).status).toBe(404);
  });

  it("the retention run deletes proofs and their images after the company's proof_retention_days, not before", async () => {
    const { co, driver, deliveryId } = await onTheWay();
    expect((await call("PATCH", `/_operator/companies/${co.slug}`, { headers: OPERATOR, body: { proof_retention_days: 3 } })).status).toBe(200);
    await upload(co, deliveryId, driver.token, { photo: new Blob([PNG], { type: "image/png" }), signature: new Blob([PNG], { type: "image/png" }) });
    const cron = async (days: number) => {
      vi.useFakeTimers({ toFake: ["Date"] });
      vi.setSystemTime(Date.now() + days * DAY);
      const quiet = vi.spyOn(console, "log").mockImplementation(() => undefined);
      try {
        await worker.scheduled(createScheduledController(), { ...env, WEBHOOK_QUEUE: { send: async () => undefined, sendBatch: async () => undefined } as never });
      } finally {
        quiet.mockRestore();
        vi.useRealTimers();
      }
    };
    await cron(2);
    expect((await co.api("GET", `/delivery/${deliveryId}/proof`)).body.num_results).toBe(1);
    expect(await r2Keys(co.id)).toHaveLength(2);
    await cron(4);
    expect((await co.api("GET", `/delivery/${deliveryId}/proof`)).body.num_results).toBe(0);
    expect(await r2Keys(co.id)).toEqual([]);
  });

  it("upload rows carry the parcel code in a scancode column", async () => {
    const co = await createCompany();
    const csv = "custom_id,street,housenumber,postalcode,city,lat,lng,Barcode\nA-1,Invalidenstraße,117,10115,Berlin,52.53,13.38,PARCEL-77\n";
    const form = new FormData();
    form.append("file[]", new Blob([csv], { type: "text/csv" }), "rows.csv");
    const response = await exports.default.fetch(new Request(`${ORIGIN}/${co.slug}/api/upload/deliveryonly`, { method: "POST", headers: { Authorization: `JWT ${co.dispatcher.token}` }, body: form }));
    const body = (await response.json()) as { delivery_ids: number[] };
    expect(response.status).toBe(200);
    expect((await co.api("GET", `/delivery/${body.delivery_ids[0]}`)).body.scancode).toBe("PARCEL-77");
  });
});

describe("image checks (src/core/lib/images.ts)", () => {
  const riff = (chunks: [string, number[]][]) => {
    const body = chunks.flatMap(([name, data]) => {
      const size = data.length;
      return [...[...name].map((c) => c.charCodeAt(0)), size & 255, (size >> 8) & 255, 0, 0, ...data, ...(size & 1 ? [0] : [])];
    });
    const total = body.length + 4;
    return Uint8Array.from([..."RIFF"].map((c) => c.charCodeAt(0)).concat([total & 255, (total >> 8) & 255, 0, 0], [..."WEBP"].map((c) => c.charCodeAt(0)), body));
  };
  // VP8X: flags, reserved, width-1 and height-1 as 24-bit little-endian (800 x 600).
  const vp8x = [0, 0, 0, 0, 0x1f, 0x03, 0, 0x57, 0x02, 0];

  it("reads WebP dimensions and refuses a WebP carrying EXIF", async () => {
    const { checkImage, ImageError } = await import("../src/core/lib/images");
    expect(checkImage(riff([["VP8X", vp8x], ["VP8L", [0x2f, 0, 0, 0, 0]]]), 4096)).toMatchObject({ type: "image/webp", width: 800, height: 600 });
    expect(() => checkImage(riff([["VP8X", vp8x], ["EXIF", [1, 2, 3, 4]]]), 4096)).toThrow(ImageError);
  });

  it("strips PNG text chunks, refuses images beyond the side limit and files that only claim to be images", async () => {
    const { checkImage, ImageError } = await import("../src/core/lib/images");
    const text = [..."Comment\0GPS 52.5 13.4"].map((c) => c.charCodeAt(0));
    const chunk = [0, 0, 0, text.length, ..."tEXt"].map((c) => (typeof c === "string" ? c.charCodeAt(0) : c)).concat(text, [0, 0, 0, 0]);
    const withText = Uint8Array.from([...PNG.slice(0, 33), ...chunk, ...PNG.slice(33)]);
    const checked = checkImage(withText, 4096);
    expect(checked).toMatchObject({ type: "image/png", width: 1, height: 1, stripped: chunk.length });
    expect([...checked.bytes]).toEqual([...PNG]);
    expect(() => checkImage(jpegWithGps(), 600)).toThrow(/larger than 600 px/);
    expect(() => checkImage(new TextEncoder().encode("GIF89a not allowed"), 4096)).toThrow(ImageError);
    expect(() => checkImage(jpegWithGps().slice(0, 30), 4096)).toThrow(ImageError);
  });
});
