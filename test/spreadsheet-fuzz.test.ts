/**
 * Fuzzing of the spreadsheet reader through `POST /upload/deliveryonly`:
 * damaged archives (truncated, bytes overwritten, wrong CRC, overlapping
 * entries, deflate garbage, lying directories) and random bytes. Every answer
 * is a 2xx (a damage that left the file readable) or a 4xx with the error
 * body, never a 5xx. fast-check with a fixed seed.
 *
 * `npm run fuzz -- --runs N [--seed S]` runs 25 x N cases per kind (the suite uses N = 2).
 */
import { env } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { ORIGIN, type TestCompany, createCompany } from "./helpers";
import { crc32, sheetWorkbook, zip } from "./zip";

const RUNS = (Number(env.FUZZ_RUNS) || 2) * 25;
const SEED = Number(env.FUZZ_SEED) || 20261126;

const SHARED = ["PLZ", "Ort", "custom_id", "10115", "Berlin"];
const SHEET = `<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c><c r="C1" t="s"><v>2</v></c></row><row r="2"><c r="A2" t="s"><v>3</v></c><c r="B2" t="s"><v>4</v></c><c r="C2" t="inlineStr"><is><t>F-1</t></is></c></row>`;
const GOOD = sheetWorkbook(SHEET, SHARED);

/** Offsets of the central directory records of an archive (signature 0x02014b50). */
function directoryRecords(bytes: Uint8Array): number[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out: number[] = [];
  for (let i = 0; i + 4 <= bytes.length; i++) if (view.getUint32(i, true) === 0x02014b50) out.push(i);
  return out;
}

function patched(bytes: Uint8Array, edit: (view: DataView) => void): Uint8Array {
  const copy = bytes.slice();
  edit(new DataView(copy.buffer));
  return copy;
}

const byteArray = (max: number) => fc.uint8Array({ minLength: 0, maxLength: max });

/** Damaged archives by kind, each an arbitrary of file bytes. */
const KINDS: Record<string, fc.Arbitrary<Uint8Array>> = {
  truncated: fc.integer({ min: 0, max: GOOD.length - 1 }).map((n) => GOOD.slice(0, n)),
  "bytes overwritten": fc.array(fc.tuple(fc.nat(GOOD.length - 1), fc.nat(255)), { minLength: 1, maxLength: 8 }).map((edits) =>
    patched(GOOD, (v) => edits.forEach(([at, value]) => v.setUint8(at, value))),
  ),
  "wrong CRC or size": fc.tuple(fc.constantFrom(16, 20, 24), fc.integer({ min: 1, max: 0xffffffff }), fc.nat(2)).map(([field, delta, k]) =>
    patched(GOOD, (v) => {
      const record = directoryRecords(GOOD)[k];
      v.setUint32(record + field, (v.getUint32(record + field, true) + delta) >>> 0, true);
    }),
  ),
  "overlapping entries": fc.tuple(fc.nat(2), fc.nat(2), fc.integer({ min: -40, max: 40 })).map(([from, to, shift]) =>
    patched(GOOD, (v) => {
      const records = directoryRecords(GOOD);
      v.setUint32(records[to] + 42, Math.max(0, v.getUint32(records[from] + 42, true) + shift), true);
    }),
  ),
  "deflate garbage": fc.tuple(byteArray(4000), fc.nat(100_000)).map(([data, size]) =>
    zip([
      { name: "xl/sharedStrings.xml", text: `<sst>${SHARED.map((t) => `<si><t>${t}</t></si>`).join("")}</sst>` },
      { name: "xl/worksheets/sheet1.xml", raw: { data, size, crc: crc32(data) } },
    ]),
  ),
  "lying directory": fc.tuple(fc.constantFrom(8, 10, 12, 16), fc.nat(0xffff)).map(([field, value]) =>
    patched(GOOD, (v) => {
      const eocd = GOOD.length - 22;
      if (field === 16 || field === 12) v.setUint32(eocd + field, value * 977, true);
      else v.setUint16(eocd + field, value, true);
    }),
  ),
  "random bytes": byteArray(3000).map((b) => Uint8Array.from([0x50, 0x4b, ...b])),
};

describe("fuzz: the spreadsheet reader on damaged archives", () => {
  let co: TestCompany;
  beforeAll(async () => {
    co = await createCompany();
  });

  it(`answers ${RUNS} damaged archives of each kind with a 4xx or a 2xx, never a 5xx`, { timeout: 60_000 + RUNS * 2_000 }, async () => {
    const failures: string[] = [];
    const figures: Record<string, Record<number, number>> = {};
    for (const [k, [kind, arbitrary]] of Object.entries(KINDS).entries()) {
      figures[kind] = {};
      for (const [i, bytes] of fc.sample(arbitrary, { seed: SEED + k, numRuns: RUNS }).entries()) {
        const form = new FormData();
        form.append("file[]", new File([bytes], `fuzz-${i}.xlsx`));
        const res = await exports.default.fetch(new Request(`${ORIGIN}/${co.slug}/api/upload/deliveryonly`, { method: "POST", headers: { Authorization: `JWT ${co.dispatcher.token}` }, body: form }));
        const text = await res.text();
        figures[kind][res.status] = (figures[kind][res.status] ?? 0) + 1;
        const where = `${kind} #${i}: ${res.status} ${text.slice(0, 200)}`;
        if (res.status >= 500) failures.push(where);
        else if (res.status >= 400) {
          const body = JSON.parse(text);
          if (!(body.code === res.status && typeof body.message === "string" && body.fields === "file[]")) failures.push(`error shape: ${where}`);
        }
      }
    }
    console.log(`spreadsheet fuzz (seed ${SEED}, ${RUNS} per kind), answers by status: ${JSON.stringify(figures)}`);
    expect(failures.slice(0, 20), `${failures.length} failures`).toEqual([]);
  });
});
