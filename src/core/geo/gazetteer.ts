/**
 * Offline geocoder over the `gazetteer_places` reference table (German postal
 * codes and places, loaded by migration 0100). Every lookup is one indexed
 * query: (country, postalcode), (country, place_key) or the lat index.
 */
import { toCountryCode } from "./country";
import { haversineMeters } from "./distance";
import { normalizePostalcode, placeKey, splitPostalcodeCity } from "./normalize";
import type { GeocodeQuery, GeocodeResult, Geocoder, ReverseResult } from "./types";

interface PlaceRow {
  country: string;
  postalcode: string;
  place: string;
  lng: number;
  lat: number;
  source: string;
}

export interface GazetteerOptions {
  /** Country assumed when the query names none. Default `DE`. */
  defaultCountry?: string;
  /** Reverse lookups farther than this from every place give null. Default 30 km. */
  maxReverseDistanceMeters?: number;
}

/** Rows obtained directly from GeoNames first, then spread city codes, then interpolated ones. */
const SOURCE_RANK = "CASE source WHEN 'geonames' THEN 0 WHEN 'geonames-spread' THEN 1 ELSE 2 END";
const COLUMNS = "country, postalcode, place, lng, lat, source";

export class GazetteerGeocoder implements Geocoder {
  private readonly defaultCountry: string;
  private readonly maxReverse: number;

  constructor(
    private readonly db: D1Database,
    options: GazetteerOptions = {},
  ) {
    this.defaultCountry = options.defaultCountry ?? "DE";
    this.maxReverse = options.maxReverseDistanceMeters ?? 30_000;
  }

  async geocode(query: GeocodeQuery): Promise<GeocodeResult | null> {
    let country = this.defaultCountry;
    if (query.country != null && String(query.country).trim() !== "") {
      const code = toCountryCode(query.country);
      if (!code) return null;
      country = code;
    }
    const { postalcode: rawCode, city } = splitPostalcodeCity(query.postalcode, query.city);
    const cityKey = city ? placeKey(city) : "";
    const postalcode = normalizePostalcode(rawCode, country);

    if (postalcode) {
      // Postal code (+ city): the row matching both wins, else the code's best row.
      const row = await this.db
        .prepare(
          `SELECT ${COLUMNS} FROM gazetteer_places WHERE country = ?1 AND postalcode = ?2
           ORDER BY (place_key = ?3) DESC, ${SOURCE_RANK}, place LIMIT 1`,
        )
        .bind(country, postalcode, cityKey)
        .first<PlaceRow>();
      if (row) return toResult(row, "postalcode");
    }
    if (cityKey) {
      for (const key of cityKeyVariants(cityKey)) {
        const row = await this.findPlace(country, key);
        if (row) return toResult(row, "place");
      }
    }
    return null;
  }

  /**
   * One query over the (country, place_key) index: the exact key or a key
   * continuing with a space ("frankfurt" -> "frankfurt am main"); exact first,
   * then the place with most postal codes; within it the GeoNames point
   * (for multi-code cities the centre, i.e. its lowest code).
   */
  private findPlace(country: string, key: string): Promise<PlaceRow | null> {
    return this.db
      .prepare(
        `SELECT ${COLUMNS}, MIN(${SOURCE_RANK} * 100000 + CAST(postalcode AS INTEGER)) AS rank, COUNT(*) AS n
         FROM gazetteer_places WHERE country = ?1 AND place_key >= ?2 AND place_key < ?3
         GROUP BY place_key ORDER BY (place_key = ?2) DESC, n DESC LIMIT 1`,
      )
      .bind(country, key, `${key}!`)
      .first<PlaceRow>();
  }

  async reverse(lng: number, lat: number): Promise<ReverseResult | null> {
    if (!Number.isFinite(lng) || !Number.isFinite(lat) || Math.abs(lat) > 90 || Math.abs(lng) > 180) return null;
    // A small window first (dense areas answer from a few rows), then the full radius.
    const full = this.maxReverse / 111_320;
    for (const dLat of full > 0.05 ? [0.05, full] : [full]) {
      const dLng = dLat / Math.max(0.01, Math.cos((lat * Math.PI) / 180));
      const { results } = await this.db
        .prepare(
          `SELECT ${COLUMNS} FROM gazetteer_places
           WHERE lat BETWEEN ?1 AND ?2 AND lng BETWEEN ?3 AND ?4`,
        )
        .bind(lat - dLat, lat + dLat, lng - dLng, lng + dLng)
        .all<PlaceRow>();
      let best: PlaceRow | null = null;
      let bestD = Infinity;
      for (const r of results) {
        const d = haversineMeters(lng, lat, r.lng, r.lat);
        // ties (several places on one coordinate): prefer GeoNames rows, then the lower code
        if (d < bestD - 1e-6 || (Math.abs(d - bestD) <= 1e-6 && best && preferRow(r, best))) {
          best = r;
          bestD = d;
        }
      }
      // inside the small window the nearest row is only certain when within dLat
      if (best && (bestD <= dLat * 111_320 || dLat === full)) {
        if (bestD > this.maxReverse) return null;
        return {
          lng: best.lng,
          lat: best.lat,
          postalcode: best.postalcode,
          city: best.place,
          country: best.country,
          distance: Math.round(bestD),
          source: "gazetteer",
        };
      }
    }
    return null;
  }
}

function preferRow(a: PlaceRow, b: PlaceRow): boolean {
  const rank = (s: string) => (s === "geonames" ? 0 : s === "geonames-spread" ? 1 : 2);
  if (rank(a.source) !== rank(b.source)) return rank(a.source) < rank(b.source);
  return a.postalcode < b.postalcode;
}

function toResult(row: PlaceRow, precision: "postalcode" | "place"): GeocodeResult {
  return {
    lng: row.lng,
    lat: row.lat,
    postalcode: row.postalcode,
    city: row.place,
    country: row.country,
    source: "gazetteer",
    precision,
    basis: row.source,
  };
}

/** The key itself, "st"/"sankt" spellings, then the first word ("hamburg altona" -> "hamburg"). */
export function cityKeyVariants(key: string): string[] {
  const out = [key];
  if (key.startsWith("st ")) out.push(`sankt ${key.slice(3)}`);
  else if (key.startsWith("sankt ")) out.push(`st ${key.slice(6)}`);
  const first = key.split(" ")[0];
  if (first && first !== key && first.length >= 3 && !["st", "sankt", "bad", "neu", "alt", "gross", "klein"].includes(first)) out.push(first);
  return out;
}
