/**
 * ZIP archives for upload tests: well-formed workbooks (with CRCs), and the
 * hostile kinds the spreadsheet reader must refuse (bombs, lying headers).
 */
import { Buffer } from "node:buffer";
import { constants, deflateRawSync } from "node:zlib";

export interface ZipItem {
  name: string;
  /** The entry's content (deflated unless `stored`), or ready compressed data with the size and CRC to declare. */
  text?: string;
  stored?: boolean;
  raw?: { data: Uint8Array; size: number; crc: number };
}

const CRC_TABLE = Uint32Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c;
});
export function crc32(bytes: Uint8Array): number {
  let c = ~0;
  for (let i = 0; i < bytes.length; i++) c = CRC_TABLE[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return ~c >>> 0;
}

export function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((s, p) => s + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

export function zip(items: ZipItem[]): Uint8Array {
  const enc = new TextEncoder();
  const parts: Uint8Array[] = [];
  const central: Uint8Array[] = [];
  let offset = 0;
  for (const item of items) {
    const plain = enc.encode(item.text ?? "");
    const deflate = !item.stored;
    const { data, size, crc } = item.raw ?? { data: deflate ? new Uint8Array(deflateRawSync(plain)) : plain, size: plain.length, crc: crc32(plain) };
    const name = enc.encode(item.name);
    const local = new DataView(new ArrayBuffer(30));
    local.setUint32(0, 0x04034b50, true);
    local.setUint16(8, deflate ? 8 : 0, true);
    local.setUint32(14, crc, true);
    local.setUint32(18, data.length, true);
    local.setUint32(22, size, true);
    local.setUint16(26, name.length, true);
    parts.push(new Uint8Array(local.buffer), name, data);
    const dir = new DataView(new ArrayBuffer(46));
    dir.setUint32(0, 0x02014b50, true);
    dir.setUint16(10, deflate ? 8 : 0, true);
    dir.setUint32(16, crc, true);
    dir.setUint32(20, data.length, true);
    dir.setUint32(24, size, true);
    dir.setUint16(28, name.length, true);
    dir.setUint32(42, offset, true);
    central.push(new Uint8Array(dir.buffer), name);
    offset += 30 + name.length + data.length;
  }
  const size = central.reduce((s, p) => s + p.length, 0);
  const end = new DataView(new ArrayBuffer(22));
  end.setUint32(0, 0x06054b50, true);
  end.setUint16(8, items.length, true);
  end.setUint16(10, items.length, true);
  end.setUint32(12, size, true);
  end.setUint32(16, offset, true);
  return concat([...parts, ...central, new Uint8Array(end.buffer)]);
}

/**
 * Raw deflate data inflating to `mib` MiB of zeros in about mib KB: one MiB
 * compressed with a full flush (no back-reference across it) repeated, then an
 * empty final block.
 */
export function zeroBomb(mib: number): Uint8Array {
  const block = new Uint8Array(deflateRawSync(Buffer.alloc(1024 * 1024), { level: 9, finishFlush: constants.Z_FULL_FLUSH }));
  return concat([...Array.from({ length: mib }, () => block), Uint8Array.of(0x03, 0x00)]);
}

/** A workbook whose worksheet inflates to `mib` MiB of zeros while its headers claim `declared` bytes. */
export function bombWorkbook(mib: number, declared = 1000): Uint8Array {
  return zip([
    { name: "[Content_Types].xml", text: "<Types/>" },
    { name: "xl/worksheets/sheet1.xml", raw: { data: zeroBomb(mib), size: declared, crc: 0 } },
  ]);
}

/** A workbook of one worksheet with the given `<sheetData>` content and shared strings. */
export function sheetWorkbook(sheetData: string, shared: string[] = []): Uint8Array {
  const items: ZipItem[] = [{ name: "[Content_Types].xml", text: "<Types/>" }];
  if (shared.length) items.push({ name: "xl/sharedStrings.xml", text: `<sst>${shared.map((t) => `<si><t>${t}</t></si>`).join("")}</sst>` });
  items.push({ name: "xl/worksheets/sheet1.xml", text: `<?xml version="1.0"?><worksheet><sheetData>${sheetData}</sheetData></worksheet>` });
  return zip(items);
}
