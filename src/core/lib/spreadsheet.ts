/**
 * Reading uploaded spreadsheets: CSV (comma, semicolon or tab separated,
 * RFC 4180 quoting) and XLSX (the first worksheet). Pure apart from zlib
 * (node:zlib, nodejs_compat); no dependency, since XLSX is a ZIP of XML.
 * Answers the rows as strings, the first row being the header.
 *
 * Uploads come from outside, so the reader trusts no size an archive declares
 * and bounds all its work (SHEET_LIMITS): zlib stops inflating at the limit
 * (the platform's DecompressionStream inflates a whole input ahead of its
 * reader, so it cannot be stopped in time), and XML is scanned in one linear pass.
 */

import { inflateRawSync } from "node:zlib";
import { instantOf } from "../../shared/wall-clock";

export type Sheet = string[][];

const MiB = 1024 * 1024;

/** What one uploaded file may hold; docs/interface.md ("Uploads and files") and SECURITY.md quote these. */
export const SHEET_LIMITS = {
  /** Uncompressed bytes of one ZIP entry (worksheet, shared strings). */
  entryBytes: 16 * MiB,
  /** Uncompressed bytes read from one archive in total. */
  totalBytes: 24 * MiB,
  /** Uncompressed : compressed bytes of an entry, checked once it passed `ratioFrom` bytes (real worksheets stay below 1:50). */
  ratio: 200,
  ratioFrom: 1 * MiB,
  /** Data rows (non-empty rows after the header). */
  rows: 5000,
  /** Columns: a non-empty cell beyond column IV (256) is refused. */
  columns: 256,
  /** Cell elements in a worksheet, empty ones included (100 per data row). */
  cells: 500_000,
  /** Characters of one cell (Excel's own limit). */
  cellChars: 32_767,
} as const;

/** An unreadable or too large file; `status` 413 for a size limit, 422 otherwise. */
export class SpreadsheetError extends Error {
  constructor(
    message: string,
    readonly status: 413 | 422 = 422,
  ) {
    super(message);
  }
}

/** Parses a file by its name or content: XLSX when it is a ZIP, CSV otherwise. */
export async function readSpreadsheet(name: string, bytes: Uint8Array): Promise<Sheet> {
  const isZip = bytes.length > 4 && bytes[0] === 0x50 && bytes[1] === 0x4b;
  if (isZip) return readXlsx(bytes);
  if (/\.(xlsx|xlsm)$/i.test(name)) throw new SpreadsheetError(`${name} is not a valid XLSX file`);
  if (/\.xls$/i.test(name)) throw new SpreadsheetError(`${name}: the old binary .xls format is not supported; save it as .xlsx or .csv`);
  return readCsv(new TextDecoder("utf-8").decode(bytes).replace(/^\uFEFF/, ""));
}

/** Collects non-empty rows under the row, column and cell-length limits. */
class RowSink {
  readonly rows: Sheet = [];
  add(row: string[]) {
    if (!row.some((cell) => cell !== undefined && cell.trim() !== "")) return;
    if (this.rows.length > SHEET_LIMITS.rows) throw new SpreadsheetError(`more than ${SHEET_LIMITS.rows} data rows`);
    this.rows.push(Array.from(row, (v) => v ?? ""));
  }
}

const checkCellLength = (length: number) => {
  if (length > SHEET_LIMITS.cellChars) throw new SpreadsheetError(`a cell is longer than ${SHEET_LIMITS.cellChars} characters`);
};

export function readCsv(text: string): Sheet {
  const firstLine = text.slice(0, text.search(/\r?\n|$/));
  const counts = [",", ";", "\t"].map((d) => [d, firstLine.split(d).length] as const);
  const delimiter = counts.sort((a, b) => b[1] - a[1])[0][0];
  const sink = new RowSink();
  let row: string[] = [];
  let field = "";
  let quoted = false;
  const endField = () => {
    checkCellLength(field.length);
    row.push(field);
    if (row.length > SHEET_LIMITS.columns) throw new SpreadsheetError(`more than ${SHEET_LIMITS.columns} columns`);
    field = "";
  };
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"' && field === "") quoted = true;
    else if (ch === delimiter) endField();
    else if (ch === "\n" || ch === "\r") {
      if (ch === "\r" && text[i + 1] === "\n") i++;
      endField();
      sink.add(row);
      row = [];
    } else field += ch;
  }
  if (field !== "" || row.length) {
    endField();
    sink.add(row);
  }
  return sink.rows;
}

interface ZipEntry {
  name: string;
  method: number;
  crc: number;
  compressedSize: number;
  declaredSize: number;
  /** Where the entry's compressed data starts and ends in the archive. */
  start: number;
  end: number;
  headerOffset: number;
}

function zipEntries(bytes: Uint8Array): Map<string, ZipEntry> {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const damaged = (what: string) => new SpreadsheetError(`damaged ZIP archive: ${what}`);
  // End of central directory: the last 0x06054b50 signature (a comment may follow it).
  let eocd = -1;
  for (let i = bytes.length - 22; i >= Math.max(0, bytes.length - 65_557); i--) {
    if (view.getUint32(i, true) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw new SpreadsheetError("not a ZIP archive");
  const count = view.getUint16(eocd + 10, true);
  let p = view.getUint32(eocd + 16, true);
  const entries = new Map<string, ZipEntry>();
  for (let k = 0; k < count; k++) {
    if (p + 46 > bytes.length || view.getUint32(p, true) !== 0x02014b50) throw damaged("directory");
    const flags = view.getUint16(p + 8, true);
    const nameLength = view.getUint16(p + 28, true);
    const name = new TextDecoder().decode(bytes.subarray(p + 46, p + 46 + nameLength));
    const compressedSize = view.getUint32(p + 20, true);
    const declaredSize = view.getUint32(p + 24, true);
    const headerOffset = view.getUint32(p + 42, true);
    if (flags & 1) throw new SpreadsheetError(`encrypted ZIP entry ${name} (save the workbook without a password)`);
    if (compressedSize === 0xffffffff || declaredSize === 0xffffffff || headerOffset === 0xffffffff) throw new SpreadsheetError(`ZIP64 entry ${name}: too large`, 413);
    if (headerOffset + 30 > bytes.length || view.getUint32(headerOffset, true) !== 0x04034b50) throw damaged(`entry ${name}`);
    const start = headerOffset + 30 + view.getUint16(headerOffset + 26, true) + view.getUint16(headerOffset + 28, true);
    if (start + compressedSize > bytes.length) throw damaged(`entry ${name} is truncated`);
    if (entries.has(name)) throw damaged(`entry ${name} twice`);
    entries.set(name, { name, method: view.getUint16(p + 10, true), crc: view.getUint32(p + 16, true), compressedSize, declaredSize, start, end: start + compressedSize, headerOffset });
    p += 46 + nameLength + view.getUint16(p + 30, true) + view.getUint16(p + 32, true);
  }
  // Entries sharing bytes are how the densest ZIP bombs multiply one compressed stream.
  const sorted = [...entries.values()].sort((a, b) => a.headerOffset - b.headerOffset);
  for (let i = 1; i < sorted.length; i++) if (sorted[i].headerOffset < sorted[i - 1].end) throw damaged(`entries ${sorted[i - 1].name} and ${sorted[i].name} overlap`);
  return entries;
}

const CRC_TABLE = Uint32Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c;
});

export function crc32(chunk: Uint8Array): number {
  let c = ~0;
  for (let i = 0; i < chunk.length; i++) c = CRC_TABLE[(c ^ chunk[i]) & 0xff] ^ (c >>> 8);
  return ~c >>> 0;
}

/** The entry's bytes, inflated under the limits; `budget.left` is what the archive may still inflate. */
function unzipEntry(bytes: Uint8Array, entry: ZipEntry, budget: { left: number }): string {
  const tooLarge = (what: string) => new SpreadsheetError(`${entry.name}: ${what}`, 413);
  const entryLimit = Math.min(SHEET_LIMITS.entryBytes, budget.left);
  const sizeMessage = entryLimit < SHEET_LIMITS.entryBytes ? `the workbook inflates to more than ${SHEET_LIMITS.totalBytes / MiB} MiB` : `inflates to more than ${SHEET_LIMITS.entryBytes / MiB} MiB`;
  const ratioLimit = Math.max(SHEET_LIMITS.ratioFrom, SHEET_LIMITS.ratio * entry.compressedSize);
  const limitMessage = ratioLimit < entryLimit ? `compressed more than ${SHEET_LIMITS.ratio}:1, refused as a ZIP bomb` : sizeMessage;
  if (entry.declaredSize > entryLimit) throw tooLarge(sizeMessage);
  const data = bytes.subarray(entry.start, entry.end);
  let plain: Uint8Array;
  if (entry.method === 0) plain = data;
  else if (entry.method === 8) {
    try {
      // zlib stops as soon as the output passes the limit, whatever the archive declares (a 1 GiB bomb is refused in milliseconds).
      plain = inflateRawSync(data, { maxOutputLength: Math.min(entryLimit, ratioLimit) });
    } catch (err) {
      if (/memory limit|buffer too large|maxOutputLength/i.test(String((err as Error)?.message))) throw tooLarge(limitMessage);
      throw new SpreadsheetError(`damaged ZIP entry ${entry.name}: invalid compressed data`);
    }
  } else throw new SpreadsheetError(`unsupported ZIP compression ${entry.method}`);
  if (plain.length > Math.min(entryLimit, ratioLimit)) throw tooLarge(limitMessage);
  if (plain.length !== entry.declaredSize || crc32(plain) !== entry.crc) throw new SpreadsheetError(`damaged ZIP entry ${entry.name}: size or checksum does not match`);
  budget.left -= plain.length;
  return new TextDecoder().decode(plain);
}

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };
const unescapeXml = (s: string) =>
  s.indexOf("&") < 0
    ? s
    : s.replace(/&(#x[0-9a-f]{1,6}|#\d{1,7}|\w+);/gi, (m, e: string) => {
        if (e[0] !== "#") return ENTITIES[e] ?? m;
        const code = e[1].toLowerCase() === "x" ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
        return code <= 0x10ffff ? String.fromCodePoint(code) : m;
      });

/**
 * Calls `onTag` for every element tag of the XML with the text before it, in
 * one linear pass: no pattern here can scan further than the next `<` or `>`,
 * so no input makes it quadratic. Namespace prefixes are dropped.
 */
function scanXml(xml: string, onTag: (name: string, closing: boolean, selfClosing: boolean, attrs: string, textBefore: () => string) => void) {
  const tag = /<(\/?)([A-Za-z_][\w.:-]*)([^<>]*)>|<[!?][^<>]*>/g;
  let last = 0;
  for (let m = tag.exec(xml); m; m = tag.exec(xml)) {
    const from = last;
    const to = m.index;
    last = tag.lastIndex;
    if (!m[2]) continue;
    onTag(m[2].slice(m[2].indexOf(":") + 1), m[1] === "/", m[3].endsWith("/"), m[3], () => xml.slice(from, to));
  }
}

/** Text of a rich or plain string item (`<si>`, `<is>`): its `<t>` runs, phonetic runs left out. */
class StringText {
  text = "";
  private inT = false;
  private inPhonetic = false;
  tag(name: string, closing: boolean, selfClosing: boolean, textBefore: () => string) {
    if (name === "rPh") this.inPhonetic = !closing && !selfClosing;
    else if (name === "t" && !this.inPhonetic) {
      if (closing && this.inT) {
        this.text += unescapeXml(textBefore());
        checkCellLength(this.text.length);
      }
      this.inT = !closing && !selfClosing;
    }
  }
}

function sharedStrings(xml: string): string[] {
  const strings: string[] = [];
  let item: StringText | null = null;
  scanXml(xml, (name, closing, selfClosing, _attrs, textBefore) => {
    if (name === "si") {
      if (!closing) item = new StringText();
      if (closing || selfClosing) {
        strings.push(item?.text ?? "");
        item = null;
      }
    } else item?.tag(name, closing, selfClosing, textBefore);
  });
  return strings;
}

/** Column number of a cell reference ("A1" → 0); Infinity beyond three letters (Excel stops at XFD). */
function columnIndex(ref: string): number {
  const letters = /^[A-Z]{1,3}/.exec(ref)?.[0];
  if (!letters || /^[A-Z]{4}/.test(ref)) return Infinity;
  let n = 0;
  for (const ch of letters) n = n * 26 + (ch.charCodeAt(0) - 64);
  return n - 1;
}

function worksheetRows(xml: string, shared: string[]): Sheet {
  const sink = new RowSink();
  let row: string[] | null = null;
  let cells = 0;
  let cell: { column: number; type: string | undefined; value: string | undefined; inline: StringText | null; inValue: boolean } | null = null;
  scanXml(xml, (name, closing, selfClosing, attrs, textBefore) => {
    if (name === "row") {
      if (!closing) row = [];
      if (closing || selfClosing) {
        if (row) sink.add(row);
        row = null;
      }
      return;
    }
    if (!row) return;
    if (name === "c" && !closing) {
      if (++cells > SHEET_LIMITS.cells) throw new SpreadsheetError(`more than ${SHEET_LIMITS.cells} cells in the worksheet`);
      const ref = /\br="([^"]*)"/.exec(attrs)?.[1];
      const column = ref ? columnIndex(ref) : row.length;
      if (selfClosing) return; // an empty cell
      cell = { column, type: /\bt="(\w+)"/.exec(attrs)?.[1], value: undefined, inline: null, inValue: false };
      return;
    }
    if (!cell) return;
    if (name === "c") {
      const { type, value, inline, column } = cell;
      cell = null;
      let text = "";
      if (type === "s" && value !== undefined) text = shared[Number(value)] ?? "";
      else if (type === "inlineStr") text = inline?.text ?? "";
      else if (value !== undefined) text = type === "b" ? (value === "1" ? "true" : "false") : unescapeXml(value);
      if (text === "") return;
      if (column >= SHEET_LIMITS.columns) throw new SpreadsheetError(`more than ${SHEET_LIMITS.columns} columns`);
      row[column] = text;
    } else if (name === "v") {
      if (closing && cell.inValue) {
        cell.value = textBefore();
        checkCellLength(cell.value.length);
      }
      cell.inValue = !closing && !selfClosing;
    } else if (name === "is") cell.inline ??= new StringText();
    else cell.inline?.tag(name, closing, selfClosing, textBefore);
  });
  return sink.rows;
}

export async function readXlsx(bytes: Uint8Array): Promise<Sheet> {
  const entries = zipEntries(bytes);
  const sheetName = [...entries.keys()].filter((n) => /^xl\/worksheets\/sheet\d+\.xml$/.test(n)).sort((a, b) => parseInt(a.slice(19), 10) - parseInt(b.slice(19), 10))[0];
  if (!sheetName) throw new SpreadsheetError("the workbook has no worksheet");
  const budget = { left: SHEET_LIMITS.totalBytes };
  const sst = entries.get("xl/sharedStrings.xml");
  const shared = sst ? sharedStrings(unzipEntry(bytes, sst, budget)) : [];
  return worksheetRows(unzipEntry(bytes, entries.get(sheetName)!, budget), shared);
}

/**
 * Excel stores date-times as days since 1899-12-30 without a zone: the wall
 * clock of whoever typed them, read in `timeZone` (the company's). Answers
 * ISO 8601 UTC.
 */
export function excelSerialToIso(serial: number, timeZone: string): string {
  const wall = new Date(Math.round((serial - 25569) * 86_400) * 1000).toISOString();
  return new Date(instantOf(wall.slice(0, 10), wall.slice(11, 19), timeZone)).toISOString().replace(".000Z", "Z");
}
