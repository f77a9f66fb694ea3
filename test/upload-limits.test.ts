/**
 * The spreadsheet reader's limits (SHEET_LIMITS) through the upload API: ZIP
 * bombs, lying size headers, too many rows, columns, cells and characters are
 * refused with 413 or 422 naming the limit, never a 500 or a long stall.
 */
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { SHEET_LIMITS, readXlsx } from "../src/core/lib/spreadsheet";
import { ORIGIN, type TestCompany, createCompany } from "./helpers";
import { bombWorkbook, sheetWorkbook, zeroBomb, zip } from "./zip";

async function upload(co: TestCompany, name: string, body: string | Uint8Array) {
  const form = new FormData();
  form.append("file[]", new File([body], name));
  const started = performance.now();
  const res = await exports.default.fetch(new Request(`${ORIGIN}/${co.slug}/api/upload/deliveryonly`, { method: "POST", headers: { Authorization: `JWT ${co.dispatcher.token}` }, body: form }));
  const ms = Math.round(performance.now() - started);
  return { status: res.status, body: await res.json<{ code: number; message: string; fields: string }>(), ms };
}

/** Deterministic text that deflates about 10:1 (a random number every 64 characters). */
function lowRatioText(bytes: number): string {
  let seed = 7;
  const parts: string[] = [];
  for (let n = 0; n < bytes; n += 64) {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    parts.push(`<c><v>${String(seed).padStart(10, "0")}</v></c>`.padEnd(64, " "));
  }
  return parts.join("");
}

describe("spreadsheet limits", () => {
  it("refuses a 1 GiB ZIP bomb whose header claims 1,000 bytes with a 413 naming the limit", async () => {
    const co = await createCompany();
    const bomb = bombWorkbook(1024);
    const res = await upload(co, "bomb.xlsx", bomb);
    console.log(`zip bomb: ${bomb.length} bytes inflating to 1 GiB refused in ${res.ms} ms (${res.status})`);
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ code: 413, fields: "file[]" });
    expect(res.body.message).toMatch(/bomb\.xlsx: xl\/worksheets\/sheet1\.xml: (inflates to more than 16 MiB|compressed more than 200:1)/);
    expect((await co.api("GET", "/delivery")).body.num_results).toBe(0);
  });

  it("refuses an entry that declares more than the limit before inflating anything, and one above the compression ratio", async () => {
    const co = await createCompany();
    const honest = await upload(co, "honest.xlsx", bombWorkbook(2, 2 ** 31));
    expect(honest.status).toBe(413);
    expect(honest.body.message).toContain("inflates to more than 16 MiB");
    // 2 MiB of zeros: under the size limit, far above 200:1.
    const dense = await upload(co, "dense.xlsx", bombWorkbook(2, 2 * 1024 * 1024));
    expect(dense.status).toBe(413);
    expect(dense.body.message).toContain("compressed more than 200:1");
  });

  it("counts the whole workbook: two entries under the entry limit together above the total", async () => {
    const text = lowRatioText(13 * 1024 * 1024);
    const book = zip([
      { name: "xl/sharedStrings.xml", text: `<sst>${text}</sst>` },
      { name: "xl/worksheets/sheet1.xml", text: `<worksheet><sheetData>${text}</sheetData></worksheet>` },
    ]);
    await expect(readXlsx(book)).rejects.toMatchObject({ status: 413, message: expect.stringContaining(`more than ${SHEET_LIMITS.totalBytes / 1024 / 1024} MiB`) });
  });

  it("refuses too many rows, columns and characters, in XLSX and CSV", async () => {
    const co = await createCompany();
    const header = "PLZ;Ort;notes\n";
    const rows = await upload(co, "rows.csv", header + "10115;Berlin;x\n".repeat(SHEET_LIMITS.rows + 1));
    expect(rows.status).toBe(422);
    expect(rows.body.message).toBe(`rows.csv: more than ${SHEET_LIMITS.rows} data rows`);
    const wide = await upload(co, "wide.csv", "PLZ;Ort" + ";x".repeat(SHEET_LIMITS.columns) + "\n10115;Berlin\n");
    expect(wide.body.message).toBe(`wide.csv: more than ${SHEET_LIMITS.columns} columns`);
    const long = await upload(co, "long.csv", `${header}10115;Berlin;${"x".repeat(SHEET_LIMITS.cellChars + 1)}\n`);
    expect(long.body.message).toBe(`long.csv: a cell is longer than ${SHEET_LIMITS.cellChars} characters`);

    const xlsxRows = Array.from({ length: SHEET_LIMITS.rows + 2 }, (_, i) => `<row><c t="inlineStr"><is><t>${i ? "10115" : "PLZ"}</t></is></c></row>`).join("");
    expect((await upload(co, "rows.xlsx", sheetWorkbook(xlsxRows))).body.message).toBe(`rows.xlsx: more than ${SHEET_LIMITS.rows} data rows`);
    for (const ref of ["IW2", "XFD2", "AAAAAAAAAA2"]) {
      const res = await upload(co, "wide.xlsx", sheetWorkbook(`<row><c r="A1" t="s"><v>0</v></c></row><row><c r="${ref}"><v>1</v></c></row>`, ["PLZ"]));
      expect(res.status, ref).toBe(422);
      expect(res.body.message).toBe(`wide.xlsx: more than ${SHEET_LIMITS.columns} columns`);
    }
    const longXlsx = await upload(co, "long.xlsx", sheetWorkbook(`<row><c t="s"><v>0</v></c></row>`, ["x".repeat(SHEET_LIMITS.cellChars + 1)]));
    expect(longXlsx.body.message).toBe(`long.xlsx: a cell is longer than ${SHEET_LIMITS.cellChars} characters`);
    // Far-right empty styled cells (as spreadsheet programs write them) are no columns.
    const styled = await upload(co, "styled.xlsx", sheetWorkbook(`<row><c t="inlineStr"><is><t>PLZ</t></is></c><c r="XFD1" s="1"/></row><row><c><v>10115</v></c></row>`));
    expect(styled.status, styled.body.message).toBe(200);
  });

  it("refuses a million empty cells quickly, and millions of empty rows above 200:1", async () => {
    const co = await createCompany();
    // Styles vary so that the sheet stays below the compression ratio and reaches the cell count.
    const million = Array.from({ length: 1_000_000 }, (_, i) => `<c s="${(i * 7919) % 99991}"/>`).join("");
    const cells = await upload(co, "cells.xlsx", sheetWorkbook(`<row>${million}</row>`));
    console.log(`1,000,000 empty cells refused in ${cells.ms} ms`);
    expect(cells.status).toBe(422);
    expect(cells.body.message).toBe(`cells.xlsx: more than ${SHEET_LIMITS.cells} cells in the worksheet`);
    const empty = await upload(co, "empty.xlsx", sheetWorkbook("<row/>".repeat(2_000_000)));
    console.log(`2,000,000 empty rows refused in ${empty.ms} ms`);
    expect(empty.status).toBe(413);
    expect(empty.body.message).toContain("compressed more than 200:1");
    const sparse = await upload(co, "sparse.xlsx", sheetWorkbook(Array.from({ length: 200_000 }, (_, i) => `<row r="${i + 1}"/>`).join("")));
    console.log(`200,000 numbered empty rows read in ${sparse.ms} ms`);
    expect(sparse.status).toBe(422);
    expect(sparse.body.message).toContain("no data rows");
  });

  it("stays linear and safe on hostile XML: unclosed tags, huge character references", async () => {
    const co = await createCompany();
    const unclosed = await upload(co, "unclosed.xlsx", sheetWorkbook(Array.from({ length: 100_000 }, (_, i) => `<row r="${i}"><c><v>${i}`).join("")));
    console.log(`100,000 unclosed rows read in ${unclosed.ms} ms`);
    expect(unclosed.status).toBe(422);
    const refs = await upload(co, "refs.xlsx", sheetWorkbook(`<row><c t="inlineStr"><is><t>PLZ</t></is></c><c t="inlineStr"><is><t>notes</t></is></c></row><row><c><v>10115</v></c><c t="inlineStr"><is><t>&#99999999;&#x110000;&amp;</t></is></c></row>`));
    expect(refs.status, refs.body.message).toBe(200);
  });

  it("inflates the bomb data it is given exactly (the test's bomb is what it claims)", async () => {
    const inflated = await new Response(new Blob([zeroBomb(3)]).stream().pipeThrough(new DecompressionStream("deflate-raw"))).arrayBuffer();
    expect(inflated.byteLength).toBe(3 * 1024 * 1024);
  });
});
