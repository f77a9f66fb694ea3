/**
 * A small PMTiles v3 writer and Mapbox Vector Tile encoder, and the made-up
 * base map of the demo region (a street grid, a river, a lake, parks and
 * district names around the demo depot in Berlin) built with them.
 *
 * Used by `npm run dev` (scripts/dev.mjs uploads the archive for the demo
 * company), the browser tests (test/browser/service.ts) and the worker tests
 * (test/map.test.ts). Runs under Node and workerd alike: gzip goes through
 * CompressionStream, tile ids through the `pmtiles` package.
 *
 * The archive follows the Protomaps basemap schema for the layers it has
 * (`earth`, `water`, `landuse`, `roads`, `places`; `kind` and `name`
 * properties), so the console draws it with the same style as a real extract.
 */
import { zxyToTileId } from "pmtiles";

// ---------------------------------------------------------------- protobuf

class Writer {
  constructor() {
    /** @type {number[]} */
    this.bytes = [];
  }
  varint(n) {
    let v = n;
    while (v >= 0x80) {
      this.bytes.push((v % 0x80) | 0x80);
      v = Math.floor(v / 0x80);
    }
    this.bytes.push(v);
    return this;
  }
  tag(field, wire) {
    return this.varint(field * 8 + wire);
  }
  uint(field, n) {
    return this.tag(field, 0).varint(n);
  }
  /** A length-delimited field: bytes (Uint8Array or number[]). */
  message(field, bytes) {
    this.tag(field, 2).varint(bytes.length);
    for (const b of bytes) this.bytes.push(b);
    return this;
  }
  string(field, s) {
    return this.message(field, new TextEncoder().encode(s));
  }
  packed(field, numbers) {
    const inner = new Writer();
    for (const n of numbers) inner.varint(n);
    return this.message(field, inner.bytes);
  }
  double(field, x) {
    const b = new Uint8Array(8);
    new DataView(b.buffer).setFloat64(0, x, true);
    return this.tag(field, 1).raw(b);
  }
  raw(bytes) {
    for (const b of bytes) this.bytes.push(b);
    return this;
  }
}

const zigzag = (n) => (n < 0 ? -2 * n - 1 : 2 * n);
const command = (id, count) => (count << 3) | id;

// ---------------------------------------------------------------- MVT

export const EXTENT = 4096;

/**
 * Encodes one vector tile.
 * @param {{name: string, features: {type: 1|2|3, props: Record<string, string|number>, geometry: number[][][]}[]}[]} layers
 *   geometry in tile units (0..EXTENT): points: [[x,y],...] as one ring; lines: list of lines; polygons: list of rings (outer first).
 * @returns {Uint8Array}
 */
export function encodeTile(layers) {
  const tile = new Writer();
  for (const layer of layers) {
    if (!layer.features.length) continue;
    const keys = [];
    const values = [];
    const keyIndex = new Map();
    const valueIndex = new Map();
    const l = new Writer().uint(15, 2).string(1, layer.name);
    for (const f of layer.features) {
      const tags = [];
      for (const [k, v] of Object.entries(f.props)) {
        if (!keyIndex.has(k)) keyIndex.set(k, keys.push(k) - 1);
        const vk = `${typeof v}:${v}`;
        if (!valueIndex.has(vk)) valueIndex.set(vk, values.push(v) - 1);
        tags.push(keyIndex.get(k), valueIndex.get(vk));
      }
      const feature = new Writer().packed(2, tags).uint(3, f.type).packed(4, geometryCommands(f.type, f.geometry));
      l.message(2, feature.bytes);
    }
    for (const k of keys) l.string(3, k);
    for (const v of values) {
      const value = new Writer();
      if (typeof v === "string") value.string(1, v);
      else if (Number.isInteger(v) && v >= 0) value.uint(5, v);
      else value.double(3, v);
      l.message(4, value.bytes);
    }
    l.uint(5, EXTENT);
    tile.message(3, l.bytes);
  }
  return Uint8Array.from(tile.bytes);
}

/** Signed area of a ring in tile coordinates (y down): positive is clockwise on screen, the exterior winding of MVT 2. */
const ringArea = (ring) => {
  let a = 0;
  for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) a += (ring[j][0] - ring[i][0]) * (ring[j][1] + ring[i][1]);
  return -a / 2;
};

function geometryCommands(type, parts) {
  const out = [];
  let cx = 0;
  let cy = 0;
  const moveTo = (pts) => {
    out.push(command(1, pts.length));
    for (const [x, y] of pts) {
      out.push(zigzag(x - cx), zigzag(y - cy));
      cx = x;
      cy = y;
    }
  };
  const lineTo = (pts) => {
    out.push(command(2, pts.length));
    for (const [x, y] of pts) {
      out.push(zigzag(x - cx), zigzag(y - cy));
      cx = x;
      cy = y;
    }
  };
  if (type === 1) moveTo(parts[0]);
  else
    for (const [i, part] of parts.entries()) {
      let pts = part;
      if (type === 3) {
        // Rings are closed implicitly; the outer ring winds clockwise (positive area), holes the other way.
        if (pts.length > 1 && pts[0][0] === pts.at(-1)[0] && pts[0][1] === pts.at(-1)[1]) pts = pts.slice(0, -1);
        if ((ringArea(pts) > 0) !== (i === 0)) pts = [...pts].reverse();
      }
      moveTo([pts[0]]);
      lineTo(pts.slice(1));
      if (type === 3) out.push(command(7, 1));
    }
  return out;
}

// ---------------------------------------------------------------- PMTiles v3

async function gzip(bytes) {
  const stream = new Blob([bytes]).stream().pipeThrough(new CompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

function directoryBytes(entries) {
  const w = new Writer().varint(entries.length);
  let last = 0;
  for (const e of entries) {
    w.varint(e.tileId - last);
    last = e.tileId;
  }
  for (const e of entries) w.varint(e.runLength);
  for (const e of entries) w.varint(e.length);
  for (const [i, e] of entries.entries()) {
    const prev = entries[i - 1];
    w.varint(prev && e.offset === prev.offset + prev.length ? 0 : e.offset + 1);
  }
  return Uint8Array.from(w.bytes);
}

/**
 * Writes a PMTiles v3 archive of vector tiles: one root directory (no leaves; fine up to a few
 * thousand tiles), gzip'd directory, metadata and tiles, identical tiles stored once.
 * @param {{z: number, x: number, y: number, data: Uint8Array}[]} tiles  uncompressed MVT
 * @param {{bounds: [number, number, number, number], center: [number, number, number], metadata: object}} o
 * @returns {Promise<Uint8Array>}
 */
export async function writePmtiles(tiles, o) {
  const sorted = tiles.map((t) => ({ ...t, tileId: zxyToTileId(t.z, t.x, t.y) })).sort((a, b) => a.tileId - b.tileId);
  const blobs = [];
  const byContent = new Map();
  let offset = 0;
  const entries = [];
  for (const t of sorted) {
    const data = await gzip(t.data);
    const key = Array.from(data).join(",");
    let stored = byContent.get(key);
    if (!stored) {
      stored = { offset, length: data.length };
      byContent.set(key, stored);
      blobs.push(data);
      offset += data.length;
    }
    const prev = entries.at(-1);
    if (prev && prev.tileId + prev.runLength === t.tileId && prev.offset === stored.offset) prev.runLength++;
    else entries.push({ tileId: t.tileId, runLength: 1, offset: stored.offset, length: stored.length });
  }
  const root = await gzip(directoryBytes(entries));
  const metadata = await gzip(new TextEncoder().encode(JSON.stringify(o.metadata)));
  if (127 + root.length > 16384) throw new Error("root directory too large for one archive without leaf directories");
  const header = new Uint8Array(127);
  const view = new DataView(header.buffer);
  header.set(new TextEncoder().encode("PMTiles"), 0);
  header[7] = 3;
  const u64 = (at, n) => view.setBigUint64(at, BigInt(n), true);
  const rootOffset = 127;
  const metadataOffset = rootOffset + root.length;
  const dataOffset = metadataOffset + metadata.length;
  u64(8, rootOffset);
  u64(16, root.length);
  u64(24, metadataOffset);
  u64(32, metadata.length);
  u64(40, dataOffset); // no leaf directories
  u64(48, 0);
  u64(56, dataOffset);
  u64(64, offset);
  u64(72, sorted.length);
  u64(80, entries.length);
  u64(88, blobs.length);
  header[96] = 1; // clustered: tiles in tile id order
  header[97] = 2; // internal compression gzip
  header[98] = 2; // tile compression gzip
  header[99] = 1; // MVT
  header[100] = Math.min(...tiles.map((t) => t.z));
  header[101] = Math.max(...tiles.map((t) => t.z));
  const e7 = (x) => Math.round(x * 1e7);
  const [w, s, e, n] = o.bounds;
  view.setInt32(102, e7(w), true);
  view.setInt32(106, e7(s), true);
  view.setInt32(110, e7(e), true);
  view.setInt32(114, e7(n), true);
  header[118] = o.center[2];
  view.setInt32(119, e7(o.center[0]), true);
  view.setInt32(123, e7(o.center[1]), true);
  const out = new Uint8Array(dataOffset + offset);
  out.set(header, 0);
  out.set(root, rootOffset);
  out.set(metadata, metadataOffset);
  let at = dataOffset;
  for (const b of blobs) {
    out.set(b, at);
    at += b.length;
  }
  return out;
}

// ---------------------------------------------------------------- the demo region

/** The demo region: west, south, east, north (around the demo depot, Invalidenstraße, and the browser tests' places). */
export const DEMO_BOUNDS = /** @type {[number, number, number, number]} */ ([13.26, 52.45, 13.5, 52.58]);
export const DEMO_ATTRIBUTION = "Made-up demo streets (not real map data)";

const tileX = (lng, z) => ((lng + 180) / 360) * 2 ** z;
const tileY = (lat, z) => {
  const s = Math.sin((lat * Math.PI) / 180);
  return (0.5 - Math.log((1 + s) / (1 - s)) / (4 * Math.PI)) * 2 ** z;
};

/** The made-up features of the demo region, in lng/lat, Protomaps basemap layers and kinds. */
function demoFeatures() {
  const [W, S, E, N] = DEMO_BOUNDS;
  /** @type {{layer: string, type: 1|2|3, props: Record<string, string|number>, coords: [number, number][][], minzoom?: number}[]} */
  const f = [];
  f.push({ layer: "earth", type: 3, props: { kind: "earth" }, coords: [[[W - 0.05, S - 0.05], [E + 0.05, S - 0.05], [E + 0.05, N + 0.05], [W - 0.05, N + 0.05]]] });
  // A river winding west to east through the middle, 120 m wide, and a lake in the south-west.
  const river = (t) => [W - 0.05 + t * (E - W + 0.1), 52.518 + 0.006 * Math.sin(t * 9) + 0.004 * Math.sin(t * 23)];
  const bank = [];
  const other = [];
  for (let i = 0; i <= 160; i++) {
    const [lng, lat] = river(i / 160);
    bank.push([lng, lat + 0.00055]);
    other.push([lng, lat - 0.00055]);
  }
  f.push({ layer: "water", type: 3, props: { kind: "water", name: "Spree" }, coords: [[...bank, ...other.reverse()]] });
  for (const t of [0.3, 0.62]) f.push({ layer: "water", type: 1, props: { kind: "water", name: "Spree" }, coords: [[river(t)]] });
  const lake = [];
  for (let i = 0; i < 48; i++) lake.push([13.285 + 0.012 * Math.cos((i / 48) * 2 * Math.PI), 52.468 + 0.005 * Math.sin((i / 48) * 2 * Math.PI)]);
  f.push({ layer: "water", type: 3, props: { kind: "lake", name: "Lindensee" }, coords: [lake] });
  f.push({ layer: "water", type: 1, props: { kind: "lake", name: "Lindensee" }, coords: [[[13.285, 52.468]]] });
  // Parks and an industrial estate.
  const rect = (w, s, e, n) => [[[w, s], [e, s], [e, n], [w, n]]];
  for (const [name, w, s, e, n] of [["Stadtpark", 13.335, 52.508, 13.368, 52.514], ["Volkspark Nord", 13.40, 52.545, 13.415, 52.553], ["Hasenheide", 13.41, 52.483, 13.428, 52.49], ["Schlossgarten", 13.29, 52.52, 13.302, 52.528]])
    f.push({ layer: "landuse", type: 3, props: { kind: "park", name }, coords: rect(w, s, e, n) });
  f.push({ layer: "landuse", type: 3, props: { kind: "industrial" }, coords: rect(13.455, 52.495, 13.48, 52.505) });
  // The street grid: main streets every ~1.4 km, side streets every ~280 m (drawn from zoom 13), cut at the main streets.
  const MAJOR_LNG = 0.02;
  const MAJOR_LAT = 0.0125;
  const NAMES_NS = ["Lindenallee", "Ahornstraße", "Birkenweg", "Kastanienallee", "Eichenstraße", "Ulmenweg", "Buchenallee", "Erlenstraße", "Pappelallee", "Weidenweg", "Eschenstraße", "Tannenallee", "Fichtenweg"];
  const NAMES_EW = ["Nordring", "Hafenstraße", "Marktstraße", "Brunnenstraße", "Schulstraße", "Gartenstraße", "Bahnhofstraße", "Mühlenweg", "Südallee", "Parkstraße", "Wiesenweg"];
  const lngs = [];
  for (let x = Math.ceil(W / 0.004) * 0.004; x <= E; x += 0.004) lngs.push(+x.toFixed(4));
  const lats = [];
  for (let y = Math.ceil(S / 0.0025) * 0.0025; y <= N; y += 0.0025) lats.push(+y.toFixed(4));
  const isMajor = (v, step) => Math.abs(v / step - Math.round(v / step)) < 1e-6;
  for (const [i, x] of lngs.entries()) {
    const major = isMajor(x, MAJOR_LNG);
    const name = major ? NAMES_NS[Math.round((x - W) / MAJOR_LNG) % NAMES_NS.length] : `Querstraße ${i + 1}`;
    for (let y0 = Math.floor(S / MAJOR_LAT) * MAJOR_LAT; y0 < N; y0 += MAJOR_LAT)
      f.push({ layer: "roads", type: 2, props: { kind: major ? "major_road" : "minor_road", name }, coords: [[[x, Math.max(S, y0)], [x, Math.min(N, y0 + MAJOR_LAT)]]], minzoom: major ? 0 : 13 });
  }
  for (const [i, y] of lats.entries()) {
    const major = isMajor(y, MAJOR_LAT);
    const name = major ? NAMES_EW[Math.round((y - S) / MAJOR_LAT) % NAMES_EW.length] : `Seitenstraße ${i + 1}`;
    for (let x0 = Math.floor(W / MAJOR_LNG) * MAJOR_LNG; x0 < E; x0 += MAJOR_LNG)
      f.push({ layer: "roads", type: 2, props: { kind: major ? "major_road" : "minor_road", name }, coords: [[[Math.max(W, x0), y], [Math.min(E, x0 + MAJOR_LNG), y]]], minzoom: major ? 0 : 13 });
  }
  // A motorway ring, in 24 pieces.
  const ring = [];
  for (let i = 0; i <= 96; i++) ring.push([13.385 + 0.095 * Math.cos((i / 96) * 2 * Math.PI), 52.515 + 0.052 * Math.sin((i / 96) * 2 * Math.PI)]);
  for (let i = 0; i < 96; i += 4) f.push({ layer: "roads", type: 2, props: { kind: "highway", name: "Stadtring A 100" }, coords: [ring.slice(i, i + 5)] });
  // The city and its districts.
  f.push({ layer: "places", type: 1, props: { kind: "locality", name: "Berlin", min_zoom: 3, population_rank: 13 }, coords: [[[13.39, 52.518]]] });
  for (const [name, lng, lat] of [["Mitte", 13.405, 52.526], ["Wedding", 13.355, 52.55], ["Prenzlauer Berg", 13.43, 52.54], ["Friedrichshain", 13.455, 52.515], ["Kreuzberg", 13.41, 52.497], ["Neukölln", 13.44, 52.478], ["Schöneberg", 13.355, 52.485], ["Charlottenburg", 13.3, 52.508], ["Moabit", 13.33, 52.528]])
    f.push({ layer: "places", type: 1, props: { kind: "neighbourhood", name, min_zoom: 11 }, coords: [[[lng, lat]]] });
  return f;
}

/** The tiles of zoom `z` that cover the bounds. */
export function tilesOf([w, s, e, n], z) {
  const out = [];
  for (let x = Math.floor(tileX(w, z)); x <= Math.floor(tileX(e, z) - 1e-9); x++) for (let y = Math.floor(tileY(n, z)); y <= Math.floor(tileY(s, z) - 1e-9); y++) out.push({ z, x, y });
  return out;
}

/**
 * The demo archive: every tile of zooms `minzoom`..`maxzoom` over DEMO_BOUNDS (a feature goes into
 * the tiles its bounding box touches, unclipped: the renderer clips).
 * @param {{minzoom?: number, maxzoom?: number}} [o]
 * @returns {Promise<Uint8Array>}
 */
export async function demoArchive(o = {}) {
  const minzoom = o.minzoom ?? 10;
  const maxzoom = o.maxzoom ?? 14;
  const features = demoFeatures().map((f) => {
    const all = f.coords.flat();
    return { ...f, bbox: [Math.min(...all.map((p) => p[0])), Math.min(...all.map((p) => p[1])), Math.max(...all.map((p) => p[0])), Math.max(...all.map((p) => p[1]))] };
  });
  const tiles = [];
  for (let z = minzoom; z <= maxzoom; z++) {
    for (const t of tilesOf(DEMO_BOUNDS, z)) {
      const toTile = ([lng, lat]) => [Math.round((tileX(lng, z) - t.x) * EXTENT), Math.round((tileY(lat, z) - t.y) * EXTENT)];
      const pad = 1 / 16;
      const [tw, te] = [((t.x - pad) / 2 ** z) * 360 - 180, ((t.x + 1 + pad) / 2 ** z) * 360 - 180];
      const lat = (y) => (Math.atan(Math.sinh(Math.PI * (1 - (2 * y) / 2 ** z))) * 180) / Math.PI;
      const [tn, ts] = [lat(t.y - pad), lat(t.y + 1 + pad)];
      const layers = new Map(["earth", "landuse", "water", "roads", "places"].map((l) => [l, { name: l, features: [] }]));
      for (const f of features) {
        if ((f.minzoom ?? 0) > z) continue;
        if (f.bbox[0] > te || f.bbox[2] < tw || f.bbox[1] > tn || f.bbox[3] < ts) continue;
        layers.get(f.layer).features.push({ type: f.type, props: f.props, geometry: f.coords.map((part) => part.map(toTile)) });
      }
      tiles.push({ ...t, data: encodeTile([...layers.values()]) });
    }
  }
  return writePmtiles(tiles, {
    bounds: DEMO_BOUNDS,
    center: [13.3849, 52.5317, 13],
    metadata: {
      name: "Demo region (made up)",
      description: "A made-up street grid around the demo depot for development and tests",
      attribution: DEMO_ATTRIBUTION,
      type: "baselayer",
      vector_layers: ["earth", "landuse", "water", "roads", "places"].map((id) => ({ id, fields: { kind: "String", name: "String" } })),
    },
  });
}
