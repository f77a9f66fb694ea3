/**
 * Answers built by SQLite: the JSON text of an object straight from its row
 * (`json_object`), so the hot reads (docs/benchmarks.md, "Load") hand D1's answer to the
 * client without turning every cell into a JavaScript value and back. The
 * shape is derived from the drizzle schema (the keys and the column types
 * of `schema.ts`); test/json-answers.test.ts checks each SQL-built shape
 * against the JavaScript presenter of the same rows.
 *
 * Everything here is SQL text from the schema (table and column names, no
 * values), so an expression is built once per isolate and is safe to inline.
 */
import { getTableColumns, getTableName } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";

const identifier = (name: string) => `"${name.replaceAll('"', '""')}"`;
const KEY = /^[a-z_][a-z0-9_]*$/;

/** `"table"`: a table for the FROM clause of a subquery. */
export const tableRef = (table: SQLiteTable) => identifier(getTableName(table));

/** `"table"."column"`: a column of a table in the FROM clause (no aliases: `EXPLAIN QUERY PLAN` then names the table). */
export const columnRef = (table: SQLiteTable, column: SQLiteColumn) => `${identifier(getTableName(table))}.${identifier(column.name)}`;

/**
 * The column's value as the API shows it: booleans (stored 0/1) as `true` /
 * `false`, JSON text columns as JSON, numbers and text as stored; null as null.
 */
export function jsonValue(table: SQLiteTable, column: SQLiteColumn): string {
  const ref = columnRef(table, column);
  switch (column.columnType) {
    case "SQLiteBoolean":
      return `case when ${ref} is null then null when ${ref} then json('true') else json('false') end`;
    case "SQLiteTextJson":
      return `json(${ref})`;
    case "SQLiteInteger":
    case "SQLiteReal":
    case "SQLiteText":
      return ref;
    default:
      throw new Error(`No JSON form for column ${column.name} (${column.columnType})`);
  }
}

/** `json_object('key', value, …)` of the given keys and SQL values, in that order (the order of the keys in the answer). */
export function jsonObject(entries: readonly (readonly [string, string])[]): string {
  for (const [key] of entries) if (!KEY.test(key)) throw new Error(`Not a plain key: ${key}`);
  return `json_object(${entries.map(([key, value]) => `'${key}', ${value}`).join(", ")})`;
}

/** The table's columns as JSON entries keyed by their names in the schema (as a drizzle row has them), without `omit`. */
export function columnEntries<T extends SQLiteTable>(table: T, omit: readonly (keyof T["_"]["columns"])[] = []): [string, string][] {
  return Object.entries(getTableColumns(table))
    .filter(([key]) => !omit.includes(key))
    .map(([key, column]) => [key, jsonValue(table, column as SQLiteColumn)]);
}

/** A GeoJSON point of two columns, null when either is null (as `pointOf`). */
export const pointJson = (table: SQLiteTable, lng: SQLiteColumn, lat: SQLiteColumn) =>
  `case when ${columnRef(table, lng)} is null or ${columnRef(table, lat)} is null then null else json_object('type', 'Point', 'coordinates', json_array(${columnRef(table, lng)}, ${columnRef(table, lat)})) end`;

/**
 * A scalar subquery's JSON as JSON: the subtype that makes `json_object`
 * embed an object instead of a string is not guaranteed to survive a
 * subquery, `json()` sets it again (null stays null).
 */
export const embedded = (subquery: string) => `json((${subquery}))`;

/** The JSON envelope of a page (contract.md §4) around objects already JSON text. */
export const envelopeJson = (objects: readonly string[], counts: { num_results: number; page: number; total_pages: number }) =>
  `{"num_results":${counts.num_results},"objects":[${objects.join(",")}],"page":${counts.page},"total_pages":${counts.total_pages}}`;
