/** Address parts to geocode; every part optional, `country` a code or a name ("DE", "Deutschland"). */
export interface GeocodeQuery {
  street?: string | null;
  housenumber?: string | null;
  postalcode?: string | null;
  city?: string | null;
  country?: string | null;
}

/** How precisely a result locates the query. */
export type GeocodePrecision = "street" | "postalcode" | "place";

/** Who produced a result; matches `addresses.geocode_source`. */
export type GeocodeSource = "gazetteer" | "provider";

export interface GeocodeResult {
  lng: number;
  lat: number;
  postalcode: string | null;
  city: string | null;
  /** ISO 3166-1 alpha-2, upper case. */
  country: string | null;
  source: GeocodeSource;
  precision: GeocodePrecision;
  /** Gazetteer rows: how the coordinate was obtained (`geonames`, `geonames-spread`, `interpolated`). */
  basis?: string;
}

export interface ReverseResult {
  /** Coordinate of the place found (not the query point). */
  lng: number;
  lat: number;
  postalcode: string | null;
  city: string | null;
  country: string | null;
  /** Metres from the query point to the place found. */
  distance: number;
  source: GeocodeSource;
}

export interface Geocoder {
  /** Null when nothing matches. */
  geocode(query: GeocodeQuery): Promise<GeocodeResult | null>;
  /** Nearest known place; null when none lies within the geocoder's distance limit. */
  reverse(lng: number, lat: number): Promise<ReverseResult | null>;
}
