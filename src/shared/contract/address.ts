import type { Point } from "./geo";

/** An address record as the API answers it. */
export interface AddressOut {
  id: number;
  contactcompany: string | null;
  customernr: string | null;
  contactfirstname: string | null;
  contactlastname: string | null;
  street: string | null;
  housenumber: string | null;
  postalcode: string | null;
  city: string | null;
  district: string | null;
  /** ISO 3166-1 alpha-2. */
  country: string | null;
  email: string | null;
  phonenr: string | null;
  location: Point | null;
  addresstype: string | null;
  /** The sending system's own id of the address, unique within the company (`PUT /address/by-external-id/<id>`). */
  external_id: string | null;
}
