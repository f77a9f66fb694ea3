/**
 * Geocoding and postal areas.
 *
 *   const geocoder = createGeocoder(env, env.DB, companyId);
 *   await geocoder.geocode({ postalcode: "10115", city: "Berlin", country: "DE" });
 *   await geocoder.reverse(13.405, 52.52);
 *   await findPostalAreaForPoint(env.DB, 11.5755, 48.1374);
 */
import { GazetteerGeocoder } from "./gazetteer";
import { D1GeocodeCache, HttpGeocoder, type GeocoderKind } from "./http";
import type { Geocoder } from "./types";

export * from "./types";
export { toCountryCode } from "./country";
export { haversineMeters, EARTH_RADIUS_M } from "./distance";
export { placeKey, normalizePostalcode, splitPostalcodeCity } from "./normalize";
export { GazetteerGeocoder, type GazetteerOptions } from "./gazetteer";
export { HttpGeocoder, D1GeocodeCache, MemoryGeocodeCache, geocodeCacheKey, type GeocodeCache, type CachedAnswer, type NotFound, type GeocoderKind, type HttpGeocoderOptions } from "./http";
export { findPostalAreaForPoint, unionPostalAreas, parseAreaGeometry, toMultiPolygon, type PostalArea, type AreaGeometry } from "./postal-areas";

/** The configuration `createGeocoder` reads (a subset of the worker's Env). */
export interface GeocoderEnv {
  /** Base URL of a Nominatim- or Photon-compatible service; unset -> offline gazetteer only. */
  GEOCODER_URL?: string;
  /** `nominatim` (default) or `photon`. */
  GEOCODER_KIND?: string;
  /** Optional API key, sent as `key` query parameter. */
  GEOCODER_KEY?: string;
}

export interface CreateGeocoderOptions {
  fetch?: typeof fetch;
  timeoutMs?: number;
  userAgent?: string;
}

/**
 * The geocoder for a company: without GEOCODER_URL the offline gazetteer;
 * with it the HTTP provider, cached per company in `geocode_cache`, falling
 * back to the gazetteer on errors, timeouts and empty answers.
 */
export function createGeocoder(env: GeocoderEnv, db: D1Database, companyId: number, options: CreateGeocoderOptions = {}): Geocoder {
  const gazetteer = new GazetteerGeocoder(db);
  const url = env.GEOCODER_URL?.trim();
  if (!url) return gazetteer;
  const kind: GeocoderKind = env.GEOCODER_KIND?.trim().toLowerCase() === "photon" ? "photon" : "nominatim";
  return new HttpGeocoder({
    baseUrl: url,
    kind,
    apiKey: env.GEOCODER_KEY?.trim() || undefined,
    timeoutMs: options.timeoutMs,
    fetch: options.fetch,
    userAgent: options.userAgent ?? "dispatch-service geocoder",
    fallback: gazetteer,
    cache: new D1GeocodeCache(db, companyId),
  });
}
