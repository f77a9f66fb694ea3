/**
 * Geocoding through an external Nominatim- or Photon-compatible service, with
 * a per-company result cache and a fallback geocoder (the offline gazetteer)
 * for errors, timeouts and empty answers.
 */
import { toCountryCode } from "./country";
import { haversineMeters } from "./distance";
import { normalizePostalcode, placeKey, splitPostalcodeCity } from "./normalize";
import type { GeocodeQuery, GeocodeResult, Geocoder, GeocodePrecision, ReverseResult } from "./types";

export type GeocoderKind = "nominatim" | "photon";

/** The provider answered, but found nothing (cached for a shorter time than results). */
export interface NotFound {
  notFound: true;
}

export type CachedAnswer = GeocodeResult | ReverseResult | NotFound;

/** Cache of provider answers; `D1GeocodeCache` stores them in `geocode_cache` per company. */
export interface GeocodeCache {
  get(key: string): Promise<CachedAnswer | null>;
  set(key: string, value: CachedAnswer): Promise<void>;
}

const NOT_FOUND: NotFound = { notFound: true };

export interface HttpGeocoderOptions {
  /** Service base URL, e.g. `https://nominatim.openstreetmap.org` or `https://photon.komoot.io`. */
  baseUrl: string;
  kind?: GeocoderKind;
  /** Sent as `key` query parameter (LocationIQ / MapTiler style), if set. */
  apiKey?: string;
  /** Per request; default 3000 ms. */
  timeoutMs?: number;
  /** Injected for tests; default the global `fetch`. */
  fetch?: typeof fetch;
  /** Used on errors, timeouts and empty answers. */
  fallback?: Geocoder;
  cache?: GeocodeCache;
  /** Nominatim's usage policy asks for an identifying User-Agent. */
  userAgent?: string;
  /** Reverse answers farther than this give null. Default 30 km. */
  maxReverseDistanceMeters?: number;
}

export class HttpGeocoder implements Geocoder {
  private readonly base: string;
  private readonly kind: GeocoderKind;
  private readonly timeoutMs: number;
  private readonly doFetch: typeof fetch;
  private readonly maxReverse: number;
  /** The last provider failure, for diagnostics. */
  lastError: unknown = null;

  constructor(private readonly options: HttpGeocoderOptions) {
    this.base = options.baseUrl.replace(/\/+$/, "");
    this.kind = options.kind ?? "nominatim";
    this.timeoutMs = options.timeoutMs ?? 3000;
    this.doFetch = options.fetch ?? ((input, init) => fetch(input, init));
    this.maxReverse = options.maxReverseDistanceMeters ?? 30_000;
  }

  async geocode(input: GeocodeQuery): Promise<GeocodeResult | null> {
    const query = { ...input, ...splitPostalcodeCity(input.postalcode, input.city) };
    if (!query.street?.trim() && !query.postalcode && !query.city) return null;
    const country = query.country ? toCountryCode(query.country) : null;
    const key = geocodeCacheKey(this.kind, query, country);
    const cached = await this.cacheGet(key);
    if (cached && "precision" in cached) return cached;
    if (!cached || !("notFound" in cached)) {
      try {
        const result = await this.requestGeocode(query, country);
        // errors and timeouts are not cached; "nothing found" is
        await this.cacheSet(key, result ?? NOT_FOUND);
        if (result) return result;
      } catch (error) {
        this.lastError = error;
      }
    }
    return this.options.fallback ? this.options.fallback.geocode(query) : null;
  }

  async reverse(lng: number, lat: number): Promise<ReverseResult | null> {
    const key = `${this.kind}|reverse|${lng.toFixed(5)}|${lat.toFixed(5)}`;
    const cached = await this.cacheGet(key);
    if (cached && "distance" in cached) return cached.distance > this.maxReverse ? null : cached;
    if (!cached || !("notFound" in cached)) {
      try {
        const result = await this.requestReverse(lng, lat);
        await this.cacheSet(key, result ?? NOT_FOUND);
        if (result) return result.distance > this.maxReverse ? null : result;
      } catch (error) {
        this.lastError = error;
      }
    }
    return this.options.fallback ? this.options.fallback.reverse(lng, lat) : null;
  }

  private async cacheGet(key: string) {
    if (!this.options.cache) return null;
    try {
      return await this.options.cache.get(key);
    } catch (error) {
      this.lastError = error;
      return null;
    }
  }

  private async cacheSet(key: string, value: CachedAnswer) {
    if (!this.options.cache) return;
    try {
      await this.options.cache.set(key, value);
    } catch (error) {
      this.lastError = error;
    }
  }

  private async getJson(path: string, params: Record<string, string | undefined>): Promise<unknown> {
    const url = new URL(`${this.base}${path}`);
    for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== "") url.searchParams.set(k, v);
    if (this.options.apiKey) url.searchParams.set("key", this.options.apiKey);
    const headers: Record<string, string> = { accept: "application/json" };
    if (this.options.userAgent) headers["user-agent"] = this.options.userAgent;
    const response = await this.doFetch(url.toString(), { headers, signal: AbortSignal.timeout(this.timeoutMs) });
    if (!response.ok) throw new Error(`geocoder HTTP ${response.status}`);
    return response.json();
  }

  private async requestGeocode(q: GeocodeQuery, country: string | null): Promise<GeocodeResult | null> {
    const streetName = q.street?.trim() ?? "";
    const housenumber = streetName ? (q.housenumber?.trim() ?? "") : "";
    const postalcode = q.postalcode?.trim() || undefined;
    const city = q.city?.trim() || undefined;
    if (!streetName && !postalcode && !city) return null;
    if (this.kind === "nominatim") {
      const body = await this.getJson("/search", {
        format: "jsonv2",
        addressdetails: "1",
        limit: "1",
        // Nominatim's structured form: street=<housenumber> <streetname>
        street: [housenumber, streetName].filter(Boolean).join(" ") || undefined,
        postalcode,
        city,
        countrycodes: country?.toLowerCase(),
      });
      return parseNominatim(Array.isArray(body) ? body[0] : null);
    }
    const street = [streetName, housenumber].filter(Boolean).join(" ");
    const text = [street, [postalcode, city].filter(Boolean).join(" "), country ?? undefined].filter(Boolean).join(", ");
    const body = await this.getJson("/api", { q: text, limit: "5" });
    const features = photonFeatures(body);
    const match = features.find((f) => !country || (f.properties?.countrycode ?? "").toUpperCase() === country) ?? null;
    return parsePhoton(match);
  }

  private async requestReverse(lng: number, lat: number): Promise<ReverseResult | null> {
    if (this.kind === "nominatim") {
      const body = await this.getJson("/reverse", { format: "jsonv2", addressdetails: "1", lat: String(lat), lon: String(lng), zoom: "18" });
      const r = parseNominatim(body && typeof body === "object" && !("error" in body) ? body : null);
      return r && toReverse(r, lng, lat);
    }
    const body = await this.getJson("/reverse", { lat: String(lat), lon: String(lng), limit: "1" });
    const r = parsePhoton(photonFeatures(body)[0] ?? null);
    return r && toReverse(r, lng, lat);
  }
}

/** Cache key: provider flavour + normalised query parts (case, umlauts, spacing ignored). */
export function geocodeCacheKey(kind: string, q: GeocodeQuery, country: string | null): string {
  const norm = (s: string | null | undefined) => (s ? placeKey(s) : "");
  const pc = q.postalcode ? (normalizePostalcode(q.postalcode, country ?? "DE") ?? norm(q.postalcode)) : "";
  return [kind, norm(q.street), norm(q.housenumber), pc, norm(q.city), country ?? norm(q.country)].join("|");
}

function toReverse(r: GeocodeResult, lng: number, lat: number): ReverseResult {
  return {
    lng: r.lng,
    lat: r.lat,
    postalcode: r.postalcode,
    city: r.city,
    country: r.country,
    distance: Math.round(haversineMeters(lng, lat, r.lng, r.lat)),
    source: "provider",
  };
}

interface NominatimPlace {
  lat?: string | number;
  lon?: string | number;
  addresstype?: string;
  type?: string;
  category?: string;
  class?: string;
  address?: Record<string, string | undefined>;
}

function parseNominatim(raw: unknown): GeocodeResult | null {
  if (!raw || typeof raw !== "object") return null;
  const p = raw as NominatimPlace;
  const lat = Number(p.lat);
  const lng = Number(p.lon);
  if (!Number.isFinite(lat) || !Number.isFinite(lng)) return null;
  const a = p.address ?? {};
  const type = p.addresstype ?? p.type ?? "";
  let precision: GeocodePrecision = "place";
  if (a.road || a.house_number || type === "building" || type === "house" || type === "road") precision = "street";
  else if (type === "postcode") precision = "postalcode";
  return {
    lng,
    lat,
    postalcode: a.postcode ?? null,
    city: a.city ?? a.town ?? a.village ?? a.municipality ?? a.hamlet ?? null,
    country: a.country_code ? a.country_code.toUpperCase() : null,
    source: "provider",
    precision,
  };
}

interface PhotonFeature {
  geometry?: { coordinates?: number[] };
  properties?: Record<string, string | undefined>;
}

function photonFeatures(body: unknown): PhotonFeature[] {
  if (!body || typeof body !== "object") return [];
  const f = (body as { features?: unknown }).features;
  return Array.isArray(f) ? (f as PhotonFeature[]) : [];
}

function parsePhoton(f: PhotonFeature | null): GeocodeResult | null {
  const c = f?.geometry?.coordinates;
  if (!f || !c || c.length < 2 || !Number.isFinite(c[0]) || !Number.isFinite(c[1])) return null;
  const p = f.properties ?? {};
  const type = p.type ?? "";
  let precision: GeocodePrecision = "place";
  if (p.street || p.housenumber || type === "house" || type === "street") precision = "street";
  else if (p.osm_key === "place" && p.osm_value === "postcode") precision = "postalcode";
  return {
    lng: c[0],
    lat: c[1],
    postalcode: p.postcode ?? null,
    city: p.city ?? (type === "city" || type === "locality" || type === "district" ? p.name : undefined) ?? null,
    country: p.countrycode ? p.countrycode.toUpperCase() : null,
    source: "provider",
    precision,
  };
}

/**
 * Provider answers in `geocode_cache`, one row per (company, query key).
 * Results older than `maxAgeDays`, "not found" answers older than
 * `notFoundMaxAgeDays` are ignored (and overwritten by the next answer).
 */
export class D1GeocodeCache implements GeocodeCache {
  constructor(
    private readonly db: D1Database,
    private readonly companyId: number,
    private readonly maxAgeDays = 180,
    private readonly notFoundMaxAgeDays = 7,
  ) {}

  async get(key: string): Promise<CachedAnswer | null> {
    const row = await this.db
      .prepare("SELECT result, created_at FROM geocode_cache WHERE company_id = ?1 AND query_key = ?2")
      .bind(this.companyId, key)
      .first<{ result: string | null; created_at: string }>();
    if (!row?.result) return null;
    let value: CachedAnswer;
    try {
      value = JSON.parse(row.result) as CachedAnswer;
    } catch {
      return null;
    }
    const days = "notFound" in value ? this.notFoundMaxAgeDays : this.maxAgeDays;
    const since = new Date(Date.now() - days * 86_400_000).toISOString().replace(/\.\d{3}Z$/, "Z");
    return row.created_at >= since ? value : null;
  }

  async set(key: string, value: CachedAnswer): Promise<void> {
    await this.db
      .prepare(
        `INSERT INTO geocode_cache (company_id, query_key, lng, lat, result, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
         ON CONFLICT (company_id, query_key) DO UPDATE SET lng = excluded.lng, lat = excluded.lat,
           result = excluded.result, created_at = excluded.created_at`,
      )
      .bind(this.companyId, key, "lng" in value ? value.lng : null, "lat" in value ? value.lat : null, JSON.stringify(value))
      .run();
  }
}

/** In-memory cache (tests, or one request's batch of geocodings). */
export class MemoryGeocodeCache implements GeocodeCache {
  readonly entries = new Map<string, CachedAnswer>();
  async get(key: string) {
    return this.entries.get(key) ?? null;
  }
  async set(key: string, value: CachedAnswer) {
    this.entries.set(key, value);
  }
}
