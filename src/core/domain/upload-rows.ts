/**
 * Spreadsheet rows -> delivery inputs. Columns are recognised by name
 * (case-insensitive, English field names of the interface or common German
 * headings); unknown columns are ignored. Pure.
 */
import { excelSerialToIso } from "../lib/spreadsheet";
import type { Sheet } from "../lib/spreadsheet";
import { MAX_SKILLS_PER_RECORD, SKILL_PATTERN, parseSkillList } from "./skills";
import { type DateTimeWindow, parseWindowCell, windowDay } from "./time-windows";

export interface UploadRow {
  /** 1-based row number in the file (the header is row 1). */
  row: number;
  custom_id?: string;
  /** The sending system's id of the order: a row with one the company has changes that delivery. */
  external_id?: string;
  contactcompany?: string;
  customernr?: string;
  contactfirstname?: string;
  contactlastname?: string;
  street?: string;
  housenumber?: string;
  postalcode?: string;
  city?: string;
  country?: string;
  email?: string;
  phonenr?: string;
  lat?: number;
  lng?: number;
  pdt_from?: string;
  pdt_to?: string;
  /** A cell such as `08:00-12:00, 14:00-18:00`, on the day of pdt_from (else tomorrow). */
  time_windows?: DateTimeWindow[];
  els?: number;
  load?: number;
  load_2?: number;
  load_3?: number;
  /** A cell such as `refrigerated, tail-lift`. */
  required_skills?: string[];
  notes?: string;
  /** The parcel's barcode or QR code, checked by the driver at the door. */
  scancode?: string;
  /** Pre-clustered tour: rows with the same value go on one tour. */
  tour?: string;
}

const ALIASES: Record<string, keyof Omit<UploadRow, "row">> = {
  custom_id: "custom_id", id: "custom_id", auftrag: "custom_id", auftragsnummer: "custom_id", order: "custom_id",
  external_id: "external_id", externalid: "external_id", externe_id: "external_id",
  contactcompany: "contactcompany", company: "contactcompany", firma: "contactcompany",
  customernr: "customernr", kundennummer: "customernr", kundennr: "customernr",
  contactfirstname: "contactfirstname", firstname: "contactfirstname", vorname: "contactfirstname",
  contactlastname: "contactlastname", lastname: "contactlastname", name: "contactlastname", nachname: "contactlastname",
  street: "street", strasse: "street", "straße": "street",
  housenumber: "housenumber", hausnummer: "housenumber", nr: "housenumber",
  postalcode: "postalcode", plz: "postalcode", zip: "postalcode", postleitzahl: "postalcode",
  city: "city", ort: "city", stadt: "city",
  country: "country", land: "country",
  email: "email", "e-mail": "email",
  phonenr: "phonenr", phone: "phonenr", telefon: "phonenr",
  lat: "lat", latitude: "lat", lng: "lng", lon: "lng", longitude: "lng",
  pdt_from: "pdt_from", from: "pdt_from", von: "pdt_from",
  pdt_to: "pdt_to", to: "pdt_to", bis: "pdt_to",
  time_windows: "time_windows", opening_hours: "time_windows", zeitfenster: "time_windows", "öffnungszeiten": "time_windows",
  els: "els", service: "els", standzeit: "els",
  load: "load", load_1: "load", menge: "load", gewicht: "load",
  load_2: "load_2", volume: "load_2", volumen: "load_2",
  load_3: "load_3", pallets: "load_3", paletten: "load_3",
  required_skills: "required_skills", skills: "required_skills", anforderungen: "required_skills",
  notes: "notes", notiz: "notes", bemerkung: "notes",
  tour: "tour", custom_tour: "tour",
  scancode: "scancode", barcode: "scancode", sendungsnummer: "scancode", paketnummer: "scancode",
};

/** The address columns a row is reported with when it cannot be used (`vague_addresses`). */
export const ROW_ADDRESS_FIELDS = ["street", "housenumber", "postalcode", "city", "country"] as const;
export type RowAddress = { [K in (typeof ROW_ADDRESS_FIELDS)[number]]: string | null };

/** The address of a row as the file gives it (null where the cell is empty). */
export function rowAddress(row: { [K in keyof RowAddress]?: string | null }): RowAddress {
  return Object.fromEntries(ROW_ADDRESS_FIELDS.map((k) => [k, row[k] ?? null])) as RowAddress;
}

const NUMBER_FIELDS = new Set(["lat", "lng", "els", "load", "load_2", "load_3"]);
const TIME_FIELDS = new Set(["pdt_from", "pdt_to"]);

export interface ParsedRows {
  rows: UploadRow[];
  /** Rows that cannot be used, with the reason and their address as given. */
  rejected: { row: number; reason: string; address: RowAddress }[];
  /** Header cells that matched no field. */
  ignoredColumns: string[];
}

/** `timeZone`: the company's, the wall clock of date cells. */
export function rowsFromSheet(sheet: Sheet, timeZone: string): ParsedRows {
  const [header = [], ...body] = sheet;
  const columns = header.map((h) => ALIASES[h.trim().toLowerCase()] ?? null);
  const ignoredColumns = header.filter((_, i) => columns[i] === null).map((h) => h.trim()).filter(Boolean);
  const rows: UploadRow[] = [];
  const rejected: ParsedRows["rejected"] = [];
  body.forEach((cells, k) => {
    const row: UploadRow = { row: k + 2 };
    const problems: string[] = [];
    let windowsCell = "";
    columns.forEach((field, i) => {
      const text = (cells[i] ?? "").trim();
      if (!field || text === "") return;
      if (field === "time_windows") {
        windowsCell = text;
        return;
      }
      if (NUMBER_FIELDS.has(field)) {
        const n = Number(text.replace(",", "."));
        if (Number.isFinite(n)) (row as unknown as Record<string, unknown>)[field] = n;
        else problems.push(`${field} is not a number`);
      } else if (TIME_FIELDS.has(field)) {
        // XLSX date cells arrive as day serials on the wall clock; text dates pass through for the usual ISO checks.
        (row as unknown as Record<string, unknown>)[field] = /^\d+(\.\d+)?$/.test(text) ? excelSerialToIso(Number(text), timeZone) : text;
      } else if (field === "required_skills") {
        const skills = parseSkillList(text);
        const bad = skills.filter((s) => !SKILL_PATTERN.test(s));
        if (bad.length) problems.push(`required_skills: ${bad.join(", ")} is not a skill name (1 to 40 letters, digits, spaces or _ . / + -)`);
        else if (skills.length > MAX_SKILLS_PER_RECORD) problems.push(`required_skills: at most ${MAX_SKILLS_PER_RECORD}`);
        else row.required_skills = skills;
      } else (row as unknown as Record<string, unknown>)[field] = text;
    });
    // The windows' times of day are on the row's day, known once its outer window is read.
    if (windowsCell) {
      const windows = parseWindowCell(windowsCell, windowDay(row.pdt_from ?? row.pdt_to, timeZone), timeZone);
      if (windows) row.time_windows = windows;
      else problems.push("time_windows must be like 08:00-12:00, 14:00-18:00");
    }
    if (problems.length) rejected.push({ row: row.row, reason: problems.join("; "), address: rowAddress(row) });
    else rows.push(row);
  });
  return { rows, rejected, ignoredColumns };
}
