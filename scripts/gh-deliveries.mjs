/**
 * A Solomon / Gehring & Homberger instance as a routing request of the
 * service, so the product path can be measured on the same instance as the
 * solver benchmark (`npm run bench:routing -- --instance FILE`).
 *
 * The service plans with great-circle distance x 1.3 at the car's 40 km/h
 * and takes windows as instants and service times in whole minutes. The
 * instance's plane is laid onto a small area on the equator (lat 0.3,
 * lon 32.6, where a degree of longitude is a degree of latitude to 1e-5) so
 * that one unit of the instance is 6 s of driving (66.7 m of road, 51.3 m
 * of great circle): its times become 6 s per unit (service 10 -> 1 min,
 * 90 -> 9 min; windows and the depot's horizon from 01:00 UTC of the
 * planning day). Travel time is distance, as in the instance, and distances
 * come back in units as metres / METRES_PER_UNIT.
 */
export const SECONDS_PER_UNIT = 6;
export const CAR_KMH = 40;
export const CIRCUITY = 1.3;
const EARTH_RADIUS_M = 6_371_008.8;
/** Road metres per unit of the instance. */
export const METRES_PER_UNIT = ((CAR_KMH * 1000) / 3600) * SECONDS_PER_UNIT;
const DEGREES_PER_UNIT = (METRES_PER_UNIT / CIRCUITY / EARTH_RADIUS_M) * (180 / Math.PI);
export const DEPOT = { lat: 0.3, lng: 32.6 };
/** Time 0 of the instance: 01:00 UTC of the planning day (the service plans in the company's day). */
const START_HOUR_UTC = 1;

/** Whitespace-token parse of the Solomon format: capacity, fleet and rows of 7 numbers. */
export function parseInstance(text) {
  const tokens = text.split(/\s+/).filter(Boolean);
  const name = tokens[0];
  const capAt = tokens.findIndex((t) => t.toUpperCase() === "CAPACITY");
  const fleet = Number(tokens[capAt + 1]);
  const capacity = Number(tokens[capAt + 2]);
  let i = tokens.findIndex((t, k) => k > capAt + 2 && t.toUpperCase() === "CUSTOMER");
  while (i < tokens.length && !/^-?\d/.test(tokens[i])) i++;
  const rows = [];
  for (; i + 6 < tokens.length; i += 7) {
    const [id, x, y, demand, ready, due, service] = tokens.slice(i, i + 7).map(Number);
    rows.push({ id, x, y, demand, ready, due, service });
  }
  return { name, fleet, capacity, depot: rows[0], customers: rows.slice(1) };
}

const hhmmss = (seconds) => {
  const s = Math.round(seconds);
  return [Math.floor(s / 3600), Math.floor((s % 3600) / 60), s % 60].map((n) => String(n).padStart(2, "0")).join(":");
};

/**
 * The request body (`deliverydata`, `vehicles`, `startaddress`) for
 * `POST /calcroute/optimized/timewindow` on `day` (a Date at UTC midnight,
 * in the future), `vehicles` tours at most.
 */
export function routingRequest(instance, day, vehicles) {
  const t0 = day.getTime() + START_HOUR_UTC * 3_600_000;
  const at = (units) => new Date(t0 + units * SECONDS_PER_UNIT * 1000).toISOString();
  const { depot } = instance;
  const place = (r) => ({ lat: DEPOT.lat + (r.y - depot.y) * DEGREES_PER_UNIT, lng: DEPOT.lng + (r.x - depot.x) * DEGREES_PER_UNIT });
  const deliverydata = instance.customers.map((c) => ({
    ...place(c),
    custom_id: `c-${c.id}`,
    pdt_from: at(c.ready),
    pdt_to: at(c.due),
    els: (c.service * SECONDS_PER_UNIT) / 60,
    load: c.demand,
  }));
  const vehicle = (k) => ({
    name: `V${k + 1}`,
    capacity_1: instance.capacity,
    departure_time_from: `${hhmmss(START_HOUR_UTC * 3600 + depot.ready * SECONDS_PER_UNIT)}+00:00`,
    return_time_to: `${hhmmss(START_HOUR_UTC * 3600 + depot.due * SECONDS_PER_UNIT)}+00:00`,
  });
  return {
    deliverydata,
    vehicles: Array.from({ length: vehicles }, (_, k) => vehicle(k)),
    startaddress: { ...place(depot), city: "Bench" },
  };
}
