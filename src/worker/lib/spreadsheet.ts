/**
 * Reading uploaded spreadsheets: CSV (comma, semicolon or tab separated,
 * RFC 4180 quoting) and XLSX (the first worksheet). Pure apart from the
 * platform's DecompressionStream; no dependency, since XLSX is a ZIP of XML.
 * Answers the rows as strings, the first row being the header.
 */

import { instantOf } from "../../shared/wall-clock";

export type Sheet = string[][];

export class SpreadsheetError extends Error {}

/** Parses a file by its name or content: XLSX when it is a ZIP, CSV otherwise. */
export async function readSpreadsheet(name: string, bytes: Uint8Array): Promise<Sheet> {
  const isZip = bytes.length > 4 && bytes[0] === 0x50 && bytes[1] === 0x4b;
  if (isZip) return readXlsx(bytes);
  if (/\.(xlsx|xlsm)$/i.test(name)) throw new SpreadsheetError(`${name} is not a valid XLSX file`);
  if (/\.xls$/i.test(name)) throw new SpreadsheetError(`${name}: the old binary .xls format is not supported; save it as .xlsx or .csv`);
  return readCsv(new TextDecoder("utf-8").decode(bytes).replace(/^\uFEFF/, ""));
}

export function readCsv(text: string): Sheet {
  const firstLine = text.slice(0, text.search(/\r?\n|$/));
  const counts = [",", ";", "\t"].map((d) => [d, firstLine.split(d).length] as const);
  const delimiter = counts.sort((a, b) => b[1] - a[1])[0][0];
  const rows: Sheet = [];
  let row: string[] = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"' && field === "") quoted = true;
    else if (ch === delimiter) {
      row.push(field);
      field = "";
    } else if (ch === "\n" || ch === "\r") {
      if (ch === "\r" && text[i + 1] === "\n") i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = "";
    } else field += ch;
  }
  if (field !== "" || row.length) rows.push([...row, field]);
  return rows.filter((r) => r.some((cell) => cell.trim() !== ""));
}

interface ZipEntry {
  name: string;
  method: number;
  compressedSize: number;
  offset: number;
}

function zipEntries(bytes: Uint8Array): Map<string, ZipEntry> {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  // End of central directory: the last 0x06054b50 signature (a comment may follow it).
  let end = -1;
  for (let i = bytes.length - 22; i >= Math.max(0, bytes.length - 65_557); i--) {
    if (view.getUint32(i, true) === 0x06054b50) {
      end = i;
      break;
    }
  }
  if (end < 0) throw new SpreadsheetError("not a ZIP archive");
  const count = view.getUint16(end + 10, true);
  let p = view.getUint32(end + 16, true);
  const entries = new Map<string, ZipEntry>();
  for (let k = 0; k < count; k++) {
    if (p + 46 > bytes.length || view.getUint32(p, true) !== 0x02014b50) throw new SpreadsheetError("damaged ZIP directory");
    const method = view.getUint16(p + 10, true);
    const compressedSize = view.getUint32(p + 20, true);
    const nameLength = view.getUint16(p + 28, true);
    const extraLength = view.getUint16(p + 30, true);
    const commentLength = view.getUint16(p + 32, true);
    const offset = view.getUint32(p + 42, true);
    const name = new TextDecoder().decode(bytes.subarray(p + 46, p + 46 + nameLength));
    entries.set(name, { name, method, compressedSize, offset });
    p += 46 + nameLength + extraLength + commentLength;
  }
  return entries;
}

async function unzipEntry(bytes: Uint8Array, entry: ZipEntry): Promise<string> {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (view.getUint32(entry.offset, true) !== 0x04034b50) throw new SpreadsheetError(`damaged ZIP entry ${entry.name}`);
  const start = entry.offset + 30 + view.getUint16(entry.offset + 26, true) + view.getUint16(entry.offset + 28, true);
  const data = bytes.subarray(start, start + entry.compressedSize);
  if (entry.method === 0) return new TextDecoder().decode(data);
  if (entry.method !== 8) throw new SpreadsheetError(`unsupported ZIP compression ${entry.method}`);
  const stream = new Blob([data]).stream().pipeThrough(new DecompressionStream("deflate-raw"));
  return new Response(stream).text();
}

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };
const unescapeXml = (s: string) =>
  s.replace(/&(#x[0-9a-f]+|#\d+|\w+);/gi, (m, e: string) =>
    e[0] === "#" ? String.fromCodePoint(e[1].toLowerCase() === "x" ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10)) : (ENTITIES[e] ?? m),
  );

/** Text of every `<t>` inside an element (rich text runs concatenated). */
const textOf = (xml: string) => [...xml.matchAll(/<t(?:\s[^>]*)?>([\s\S]*?)<\/t>/g)].map((m) => unescapeXml(m[1])).join("");

const columnIndex = (ref: string) => {
  let n = 0;
  for (const ch of ref.replace(/\d+$/, "")) n = n * 26 + (ch.charCodeAt(0) - 64);
  return n - 1;
};

export async function readXlsx(bytes: Uint8Array): Promise<Sheet> {
  const entries = zipEntries(bytes);
  const sheetName = [...entries.keys()].filter((n) => /^xl\/worksheets\/sheet\d+\.xml$/.test(n)).sort((a, b) => parseInt(a.slice(19), 10) - parseInt(b.slice(19), 10))[0];
  if (!sheetName) throw new SpreadsheetError("the workbook has no worksheet");
  const shared = entries.has("xl/sharedStrings.xml") ? [...(await unzipEntry(bytes, entries.get("xl/sharedStrings.xml")!)).matchAll(/<si>([\s\S]*?)<\/si>/g)].map((m) => textOf(m[1])) : [];
  const xml = await unzipEntry(bytes, entries.get(sheetName)!);
  const rows: Sheet = [];
  for (const rowMatch of xml.matchAll(/<row[^>]*>([\s\S]*?)<\/row>/g)) {
    const row: string[] = [];
    for (const cell of rowMatch[1].matchAll(/<c\s([^>]*?)(?:\/>|>([\s\S]*?)<\/c>)/g)) {
      const attrs = cell[1];
      const body = cell[2] ?? "";
      const ref = /\br="([A-Z]+\d+)"/.exec(attrs)?.[1];
      const type = /\bt="(\w+)"/.exec(attrs)?.[1];
      const raw = /<v>([\s\S]*?)<\/v>/.exec(body)?.[1];
      let value = "";
      if (type === "s" && raw !== undefined) value = shared[Number(raw)] ?? "";
      else if (type === "inlineStr") value = textOf(body);
      else if (raw !== undefined) value = type === "b" ? (raw === "1" ? "true" : "false") : unescapeXml(raw);
      row[ref ? columnIndex(ref) : row.length] = value;
    }
    rows.push(Array.from(row, (v) => v ?? ""));
  }
  return rows.filter((r) => r.some((cell) => cell.trim() !== ""));
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
