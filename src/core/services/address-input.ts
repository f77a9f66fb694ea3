/**
 * Address input as the API takes it: textual fields and/or a location
 * (`location` GeoJSON point, or `lat`/`lng` as routing requests give it).
 * Resolved to stored columns; without a coordinate the address is geocoded,
 * and nothing found is a 422 naming the field (nothing gets stored).
 */
import type { Env } from "../env";
import { unprocessable } from "../errors";
import { GazetteerGeocoder, createGeocoder, toCountryCode } from "../geo";
import type { Point } from "../../shared/contract/geo";

/** The textual fields of an address, each optional and nullable as clients send them. */
type AddressText = Partial<Record<"contactcompany" | "customernr" | "contactfirstname" | "contactlastname" | "street" | "housenumber" | "postalcode" | "city" | "district" | "email" | "phonenr" | "addresstype", string | null>>;

/** Address input as the API takes it (`AddressInput` in the OpenAPI document): textual fields and/or a location. */
export interface AddressInputType extends AddressText {
  /** Two-letter code or a country name (e.g. `Deutschland`). */
  country?: string | null;
  /** Kept as given; omitted -> geocoded from the textual fields. */
  location?: Point;
  lat?: number;
  lng?: number;
}

/** An address input resolved to stored columns: the country as a two-letter code, a coordinate and where it came from. */
export interface ResolvedAddress extends AddressText {
  country: string | null;
  lng: number;
  lat: number;
  geocode_source: string;
}

/** The coordinate given in the input, if any (`location` wins over `lat`/`lng`). */
function givenCoordinate(input: AddressInputType, field: string): { lng: number; lat: number } | null {
  if (input.location) {
    const [lng, lat] = input.location.coordinates;
    if (Math.abs(lng) > 180 || Math.abs(lat) > 90) throw unprocessable("location is outside [-180..180, -90..90]", `${field}location`);
    return { lng, lat };
  }
  if (input.lat !== undefined && input.lng !== undefined) return { lng: input.lng, lat: input.lat };
  if (input.lat !== undefined || input.lng !== undefined) throw unprocessable("lat and lng go together", `${field}${input.lat === undefined ? "lat" : "lng"}`);
  return null;
}

/**
 * Resolves an address input for `companyId`. `field` prefixes the field names
 * of errors (e.g. `startaddress.`), so clients see where the problem is.
 */
export async function resolveAddressInput(env: Env, companyId: number | null, input: AddressInputType, field = ""): Promise<ResolvedAddress> {
  const { location: _location, lat: _lat, lng: _lng, ...textual } = input;
  let country: string | null = null;
  if (input.country) {
    country = toCountryCode(input.country);
    if (!country) throw unprocessable(`Unknown country: ${input.country}`, `${field}country`);
  }
  const given = givenCoordinate(input, field);
  if (given) return { ...textual, country, ...given, geocode_source: "input" };

  if (!input.postalcode && !input.city) throw unprocessable("An address needs a location, lat/lng, or a postal code or city to geocode", `${field}location`);
  // Without a company (operator-created depots) there is no per-company provider cache: use the gazetteer.
  const geocoder = companyId === null ? new GazetteerGeocoder(env.DB) : createGeocoder(env, env.DB, companyId);
  const found = await geocoder.geocode({
    street: input.street,
    housenumber: input.housenumber,
    postalcode: input.postalcode,
    city: input.city,
    country,
  });
  if (!found) throw unprocessable("Address could not be geocoded: nothing found for the postal code / city given", `${field}postalcode,${field}city`);
  return {
    ...textual,
    city: input.city ?? found.city,
    postalcode: input.postalcode ?? found.postalcode,
    country: country ?? found.country,
    lng: found.lng,
    lat: found.lat,
    geocode_source: found.source,
  };
}
