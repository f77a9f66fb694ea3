/**
 * Cells of every CSV file the service produces. A spreadsheet program runs a
 * cell starting with `=`, `+`, `-` or `@` (or a tab or carriage return before
 * one) as a formula, so such text gets a leading single quote (OWASP "CSV
 * injection"): `=HYPERLINK(...)` arrives as the text `'=HYPERLINK(...)`.
 * Numbers, and text that is a plain decimal number such as `-12.5` or `+49`,
 * stay as they are: a spreadsheet reads them as numbers, never as formulas.
 */

const FORMULA_START = /^[=+\-@\t\r]/;
const PLAIN_NUMBER = /^[+-]?\d+(\.\d+)?$/;

/** Text as a spreadsheet program must read it: formula-like text neutralised. */
export const spreadsheetText = (s: string) => (FORMULA_START.test(s) && !PLAIN_NUMBER.test(s) ? `'${s}` : s);

/** One CSV cell: null is empty, text neutralised and quoted when it holds a separator, quote or line break. */
export function csvCell(value: unknown): string {
  if (value === null || value === undefined) return "";
  const s = typeof value === "number" ? String(value) : spreadsheetText(String(value));
  return /[",;\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}
