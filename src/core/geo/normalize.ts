/**
 * Text normalisation shared by the gazetteer lookups. `placeKey` must stay
 * identical to `placeKey` in scripts/gazetteer-lib.mjs, which filled the
 * `gazetteer_places.place_key` column (test/geo checks every stored row).
 */

/** Lower-case ASCII folding: ä->ae, ö->oe, ü->ue, ß->ss, other diacritics stripped, punctuation runs -> one space. */
export function placeKey(name: string): string {
  return name
    .toLowerCase()
    .replace(/ä/g, "ae")
    .replace(/ö/g, "oe")
    .replace(/ü/g, "ue")
    .replace(/ß/g, "ss")
    .normalize("NFD")
    .replace(/[\u0300-\u036f]/g, "")
    .replace(/[^a-z0-9]+/g, " ")
    .trim();
}

/**
 * Normalises a postal code for lookup: drops spaces and a country prefix
 * ("D-10115", "DE 10115"); German codes are five digits, a four-digit input
 * lost its leading zero in a spreadsheet ("1067" -> "01067"). Null when
 * nothing usable is left.
 */
export function normalizePostalcode(input: string | null | undefined, country = "DE"): string | null {
  if (input == null) return null;
  let s = String(input).trim().toUpperCase().replace(/\s+/g, "");
  s = s.replace(/^(D|DE|A|AT|CH)-?(?=\d)/, "");
  if (!s) return null;
  if (country === "DE") {
    if (/^\d{4}$/.test(s)) s = `0${s}`;
    return /^\d{5}$/.test(s) ? s : null;
  }
  return /^[0-9A-Z-]{2,10}$/.test(s) ? s : null;
}

/**
 * Repairs a common input slip: "10115 Berlin" typed into the city or the
 * postal-code field (and the other one left empty or repeated).
 */
export function splitPostalcodeCity(
  postalcode: string | null | undefined,
  city: string | null | undefined,
): { postalcode: string | null; city: string | null } {
  const pc = postalcode?.trim() || null;
  const c = city?.trim() || null;
  const both = /^(?:[A-Z]{1,2}-)?(\d{4,5})\s+(\D.*)$/i;
  const inCity = c ? both.exec(c) : null;
  if (inCity && (!pc || pc === inCity[1])) return { postalcode: inCity[1], city: inCity[2].trim() };
  const inCode = pc ? both.exec(pc) : null;
  if (inCode && (!c || placeKey(c) === placeKey(inCode[2]))) return { postalcode: inCode[1], city: inCode[2].trim() };
  return { postalcode: pc, city: c };
}
