/**
 * Country input -> ISO 3166-1 alpha-2 (upper case). Accepts alpha-2 and
 * alpha-3 codes, and English, German and native names of EU members,
 * neighbours and other common countries, case- and accent-insensitively
 * ("Deutschland", "germany", "Österreich", "Oesterreich", "Schweiz", "UK").
 * Unknown input -> null.
 */
import { placeKey } from "./normalize";

/** All officially assigned ISO 3166-1 alpha-2 codes. */
const ALPHA2 = new Set(
  (
    "AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ " +
    "CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO FR " +
    "GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE JM JO JP " +
    "KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT " +
    "MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW " +
    "SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG " +
    "UM US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM ZW"
  ).split(" "),
);

/** alpha-2, alpha-3, then names (English, German, native; folded when indexed). */
const COUNTRIES: ReadonlyArray<readonly string[]> = [
  ["DE", "DEU", "Germany", "Deutschland", "Bundesrepublik Deutschland", "Federal Republic of Germany", "BRD", "Allemagne", "Germania", "Alemania", "Duitsland", "Niemcy", "Německo"],
  ["AT", "AUT", "Austria", "Österreich", "Republik Österreich", "Autriche", "Oostenrijk", "Rakousko"],
  ["CH", "CHE", "Switzerland", "Schweiz", "Suisse", "Svizzera", "Svizra", "Confoederatio Helvetica", "Helvetia", "Zwitserland"],
  ["LI", "LIE", "Liechtenstein", "Fürstentum Liechtenstein"],
  ["FR", "FRA", "France", "Frankreich", "Francia", "Frankrijk"],
  ["IT", "ITA", "Italy", "Italien", "Italia", "Italie"],
  ["ES", "ESP", "Spain", "Spanien", "España", "Espagne"],
  ["PT", "PRT", "Portugal"],
  ["NL", "NLD", "Netherlands", "The Netherlands", "Niederlande", "Nederland", "Holland", "Pays-Bas"],
  ["BE", "BEL", "Belgium", "Belgien", "Belgique", "België", "Belgie"],
  ["LU", "LUX", "Luxembourg", "Luxemburg", "Lëtzebuerg"],
  ["DK", "DNK", "Denmark", "Dänemark", "Danmark"],
  ["SE", "SWE", "Sweden", "Schweden", "Sverige"],
  ["FI", "FIN", "Finland", "Finnland", "Suomi"],
  ["NO", "NOR", "Norway", "Norwegen", "Norge", "Noreg"],
  ["IS", "ISL", "Iceland", "Island", "Ísland"],
  ["IE", "IRL", "Ireland", "Irland", "Éire", "Republic of Ireland"],
  ["GB", "GBR", "United Kingdom", "UK", "Great Britain", "Britain", "Vereinigtes Königreich", "Großbritannien", "England", "Scotland", "Wales", "Northern Ireland", "Schottland", "Nordirland"],
  ["PL", "POL", "Poland", "Polen", "Polska"],
  ["CZ", "CZE", "Czech Republic", "Czechia", "Tschechien", "Tschechische Republik", "Česko", "Česká republika"],
  ["SK", "SVK", "Slovakia", "Slowakei", "Slovensko", "Slovak Republic"],
  ["HU", "HUN", "Hungary", "Ungarn", "Magyarország"],
  ["SI", "SVN", "Slovenia", "Slowenien", "Slovenija"],
  ["HR", "HRV", "Croatia", "Kroatien", "Hrvatska"],
  ["RO", "ROU", "Romania", "Rumänien", "România"],
  ["BG", "BGR", "Bulgaria", "Bulgarien", "Balgariya"],
  ["GR", "GRC", "Greece", "Griechenland", "Hellas", "Ellada", "EL"],
  ["CY", "CYP", "Cyprus", "Zypern", "Kypros"],
  ["MT", "MLT", "Malta"],
  ["EE", "EST", "Estonia", "Estland", "Eesti"],
  ["LV", "LVA", "Latvia", "Lettland", "Latvija"],
  ["LT", "LTU", "Lithuania", "Litauen", "Lietuva"],
  ["MC", "MCO", "Monaco"],
  ["SM", "SMR", "San Marino"],
  ["VA", "VAT", "Vatican", "Vatican City", "Holy See", "Vatikan", "Vatikanstadt"],
  ["AD", "AND", "Andorra"],
  ["RS", "SRB", "Serbia", "Serbien", "Srbija"],
  ["BA", "BIH", "Bosnia and Herzegovina", "Bosnia", "Bosnien und Herzegowina", "Bosnien"],
  ["ME", "MNE", "Montenegro", "Crna Gora"],
  ["MK", "MKD", "North Macedonia", "Macedonia", "Nordmazedonien", "Mazedonien"],
  ["AL", "ALB", "Albania", "Albanien", "Shqipëria"],
  ["XK", "XKX", "Kosovo"],
  ["MD", "MDA", "Moldova", "Moldau", "Republik Moldau"],
  ["UA", "UKR", "Ukraine"],
  ["BY", "BLR", "Belarus", "Weißrussland", "Belarus'"],
  ["RU", "RUS", "Russia", "Russian Federation", "Russland"],
  ["TR", "TUR", "Turkey", "Türkiye", "Türkei"],
  ["US", "USA", "United States", "United States of America", "Vereinigte Staaten", "Vereinigte Staaten von Amerika", "America", "Amerika"],
  ["CA", "CAN", "Canada", "Kanada"],
  ["CN", "CHN", "China", "Volksrepublik China"],
  ["JP", "JPN", "Japan"],
  ["AU", "AUS", "Australia", "Australien"],
];

const BY_KEY = new Map<string, string>();
for (const [alpha2, alpha3, ...names] of COUNTRIES) {
  BY_KEY.set(alpha2.toLowerCase(), alpha2);
  BY_KEY.set(alpha3.toLowerCase(), alpha2);
  for (const name of names) {
    // also the umlaut-less spelling ("Osterreich", "Danemark") (empty keys skipped)
    for (const key of [placeKey(name), placeKey(name.normalize("NFD").replace(/[\u0300-\u036f]/g, ""))]) {
      if (key) BY_KEY.set(key, alpha2);
    }
  }
}
// common short forms and vehicle codes
for (const [k, v] of [["d", "DE"], ["a", "AT"], ["ger", "DE"], ["uk", "GB"], ["the uk", "GB"], ["el", "GR"]] as const) BY_KEY.set(k, v);

/** ISO 3166-1 alpha-2 for a code or name; null when unknown or empty. */
export function toCountryCode(input: string | null | undefined): string | null {
  if (input == null) return null;
  const raw = String(input).trim();
  if (!raw) return null;
  const key = placeKey(raw);
  const known = BY_KEY.get(key);
  if (known) return known;
  const upper = raw.toUpperCase();
  if (/^[A-Z]{2}$/.test(upper) && ALPHA2.has(upper)) return upper;
  return null;
}
