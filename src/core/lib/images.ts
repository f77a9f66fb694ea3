/**
 * What an uploaded image really is, from its bytes (never the declared type):
 * JPEG, PNG or WebP by their magic numbers, the dimensions from the header,
 * and location metadata removed. Pure.
 *
 * Metadata: a JPEG's APP1 segments (EXIF, where phones put GPS, and XMP) and
 * APP13 (IPTC/Photoshop) are cut out, the picture data stays byte for byte; a
 * PNG's `eXIf`, `iTXt`, `tEXt` and `zTXt` chunks likewise (each chunk carries its
 * own CRC, so dropping whole chunks keeps the file valid). A WebP with an `EXIF`
 * or `XMP ` chunk is refused (422): rewriting its RIFF container is not worth it
 * when the pages re-encode through a canvas, which writes none.
 */

export type ImageType = "image/jpeg" | "image/png" | "image/webp";

export interface CheckedImage {
  type: ImageType;
  width: number;
  height: number;
  /** The bytes to store: metadata removed. */
  bytes: Uint8Array;
  /** Bytes of metadata removed. */
  stripped: number;
}

export class ImageError extends Error {}

const u16be = (b: Uint8Array, i: number) => (b[i] << 8) | b[i + 1];
const u32be = (b: Uint8Array, i: number) => ((b[i] << 24) >>> 0) + (b[i + 1] << 16) + (b[i + 2] << 8) + b[i + 3];
const u24le = (b: Uint8Array, i: number) => b[i] | (b[i + 1] << 8) | (b[i + 2] << 16);
const ascii = (b: Uint8Array, i: number, n: number) => String.fromCharCode(...b.subarray(i, i + n));

/** The type by magic number, or null. */
export function sniffImage(b: Uint8Array): ImageType | null {
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return "image/jpeg";
  if (b.length >= 8 && [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a].every((v, i) => b[i] === v)) return "image/png";
  if (b.length >= 12 && ascii(b, 0, 4) === "RIFF" && ascii(b, 8, 4) === "WEBP") return "image/webp";
  return null;
}

/** Checks the bytes and answers the image to store; ImageError for anything that is not a whole, readable image. */
export function checkImage(b: Uint8Array, maxSide: number): CheckedImage {
  const type = sniffImage(b);
  if (!type) throw new ImageError("not a JPEG, PNG or WebP image");
  const result = type === "image/jpeg" ? jpeg(b) : type === "image/png" ? png(b) : webp(b);
  if (result.width < 1 || result.height < 1) throw new ImageError("image without dimensions");
  if (result.width > maxSide || result.height > maxSide) throw new ImageError(`image larger than ${maxSide} px on a side (${result.width} x ${result.height})`);
  return { type, ...result };
}

/** SOF markers carry the frame size; C4 (DHT), C8 (JPG) and CC (DAC) share the range but are not frames. */
const isSof = (m: number) => m >= 0xc0 && m <= 0xcf && m !== 0xc4 && m !== 0xc8 && m !== 0xcc;

function jpeg(b: Uint8Array) {
  const keep: Uint8Array[] = [b.subarray(0, 2)];
  let stripped = 0;
  let width = 0;
  let height = 0;
  let i = 2;
  for (;;) {
    if (i + 4 > b.length) throw new ImageError("truncated JPEG");
    if (b[i] !== 0xff) throw new ImageError("damaged JPEG (no marker where one belongs)");
    const marker = b[i + 1];
    if (marker === 0xff) {
      i++; // fill byte
      continue;
    }
    if (marker === 0xd9) throw new ImageError("JPEG without image data");
    // Standalone markers (TEM, RST) have no length.
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      keep.push(b.subarray(i, i + 2));
      i += 2;
      continue;
    }
    const length = u16be(b, i + 2);
    if (length < 2 || i + 2 + length > b.length) throw new ImageError("truncated JPEG");
    const segment = b.subarray(i, i + 2 + length);
    if (isSof(marker)) {
      if (length < 7) throw new ImageError("damaged JPEG frame header");
      height = u16be(b, i + 5);
      width = u16be(b, i + 7);
    }
    if (marker === 0xe1 || marker === 0xed) stripped += segment.length;
    else keep.push(segment);
    i += 2 + length;
    if (marker === 0xda) break; // start of scan: the rest is picture data
  }
  if (!width || !height) throw new ImageError("JPEG without a frame header");
  keep.push(b.subarray(i));
  return { width, height, bytes: stripped ? concat(keep) : b, stripped };
}

const PNG_METADATA = new Set(["eXIf", "iTXt", "tEXt", "zTXt"]);

function png(b: Uint8Array) {
  if (b.length < 33 || ascii(b, 12, 4) !== "IHDR") throw new ImageError("damaged PNG (no IHDR)");
  const width = u32be(b, 16);
  const height = u32be(b, 20);
  const keep: Uint8Array[] = [b.subarray(0, 8)];
  let stripped = 0;
  let i = 8;
  let ended = false;
  while (i + 12 <= b.length) {
    const length = u32be(b, i);
    const name = ascii(b, i + 4, 4);
    const end = i + 12 + length;
    if (end > b.length) throw new ImageError("truncated PNG");
    if (PNG_METADATA.has(name)) stripped += end - i;
    else keep.push(b.subarray(i, end));
    i = end;
    if (name === "IEND") {
      ended = true;
      break;
    }
  }
  if (!ended) throw new ImageError("truncated PNG (no IEND)");
  return { width, height, bytes: stripped ? concat(keep) : b.subarray(0, i), stripped };
}

function webp(b: Uint8Array) {
  let width = 0;
  let height = 0;
  let i = 12;
  while (i + 8 <= b.length) {
    const name = ascii(b, i, 4);
    const size = b[i + 4] | (b[i + 5] << 8) | (b[i + 6] << 16) | (b[i + 7] << 24);
    const data = i + 8;
    if (size < 0 || data + size > b.length) throw new ImageError("truncated WebP");
    if (name === "EXIF" || name === "XMP ") throw new ImageError("WebP with EXIF or XMP metadata (may hold a location): send it without, or as JPEG");
    if (name === "VP8X" && size >= 10) {
      width = u24le(b, data + 4) + 1;
      height = u24le(b, data + 7) + 1;
    } else if (name === "VP8 " && !width && size >= 10) {
      width = (b[data + 6] | (b[data + 7] << 8)) & 0x3fff;
      height = (b[data + 8] | (b[data + 9] << 8)) & 0x3fff;
    } else if (name === "VP8L" && !width && size >= 5) {
      const bits = b[data + 1] | (b[data + 2] << 8) | (b[data + 3] << 16) | (b[data + 4] << 24);
      width = (bits & 0x3fff) + 1;
      height = ((bits >>> 14) & 0x3fff) + 1;
    }
    i = data + size + (size & 1);
  }
  if (!width || !height) throw new ImageError("WebP without image data");
  return { width, height, bytes: b, stripped: 0 };
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
