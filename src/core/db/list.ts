import { type SQL, and, asc, count, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import type { Db } from "../context";
import { notFound, unprocessable } from "../errors";
import { type FieldMap, compileQuery } from "../lib/filters";
import { envelopeJson } from "./json";

export interface ListParams {
  q?: string;
  page: number;
  results_per_page?: number;
}

export interface Envelope<T> {
  num_results: number;
  objects: T[];
  page: number;
  total_pages: number;
}

/** A query that can run inside a D1 batch and answers rows of `T`. */
export type BatchQuery<T> = BatchItem<"sqlite"> & PromiseLike<T[]>;

export interface ListSpec<Row, Out, Related = never> {
  table: SQLiteTable;
  /** Tenant scope and any fixed condition (e.g. usertype), always applied. */
  scope: SQL | undefined;
  fields: FieldMap;
  idColumn: SQLiteColumn;
  /** The columns the presentation reads (default: all); e.g. no line string for a full route record, no password hash for a position. */
  columns?: Record<string, SQLiteColumn>;
  /** Page size cap (100; 10 for postal-code areas). */
  maxPerPage?: number;
  /**
   * Rows the presentation needs besides the page (addresses, positions),
   * loaded in the same round trip: `pageIds` is the parenthesised subquery
   * of the page's ids (`x in ${pageIds}`), `page(columns)` the page itself
   * with the given columns (to select from: `select "c" from ${page(...)}`).
   * Prefer `page` for columns of the page's rows: `t.id in ${pageIds}` next to
   * `t.company_id = ?` lets SQLite walk the company's index instead of
   * looking up the page's rows (test/query-plans.test.ts).
   */
  related?: (pageIds: SQL, page: (columns: Record<string, SQLiteColumn>) => SQL) => BatchQuery<Related>;
  present: (rows: Row[], related: Related[]) => Promise<Out[]> | Out[];
}

/**
 * A list whose objects SQLite builds as JSON text (db/json.ts): `json` is the
 * SQL of one object from the table's row, related rows included by correlated
 * subqueries. `listJson` answers the envelope's text; the rows never become
 * JavaScript objects (docs/benchmarks.md, "Load").
 */
export interface JsonListSpec {
  table: SQLiteTable;
  scope: SQL | undefined;
  fields: FieldMap;
  idColumn: SQLiteColumn;
  json: SQL;
  maxPerPage?: number;
}

/** A row of a `JsonListSpec` page: one object's JSON text. */
export interface JsonRow {
  json: string;
}

/** The statements of one list request, built but not run (`EXPLAIN QUERY PLAN` of exactly these: scripts/query-plans.ts). */
export interface ListStatements<Row, Related> {
  /** The page's rows (two for `single`). */
  rows: BatchQuery<Row>;
  /** The count of all matches; absent for `single`. */
  total?: BatchQuery<{ total: number }>;
  /** The related rows of the page; absent when the spec has none or the page is empty. */
  related?: BatchQuery<Related>;
  single: boolean;
  /** Rows the page takes, and where the matches are cut (`q.offset`, `q.limit`). */
  take: number;
  offset: number;
  limit?: number;
  perPage: number;
}

/**
 * Compiles a list request into its statements: the compiled `q` inside the
 * tenant scope, one page of rows (ordered by `q.order_by`, then id), the total
 * count and the related rows of the page.
 */
export function listStatements<Row, Out, Related = never>(db: Db, spec: ListSpec<Row, Out, Related>, params: ListParams): ListStatements<Row, Related>;
export function listStatements(db: Db, spec: JsonListSpec, params: ListParams): ListStatements<JsonRow, never>;
export function listStatements(db: Db, spec: ListSpec<unknown, unknown, unknown> | JsonListSpec, params: ListParams): ListStatements<unknown, unknown>;
export function listStatements<Row, Out, Related = never>(db: Db, spec: ListSpec<Row, Out, Related> | JsonListSpec, params: ListParams): ListStatements<Row | JsonRow, Related> {
  const query = compileQuery(params.q, spec.fields);
  const where = and(spec.scope, query.where);
  // The id order of an unfiltered page follows the (company_id) index and stops after the page. Filtered in id order,
  // `+id` keeps SQLite from walking every row of the company along that index looking for matches: it takes the
  // filter's index (e.g. route_id, status) and sorts the matches (test/query-plans.test.ts).
  const orderBy = [...query.orderBy, query.where && !query.orderBy.length ? sql`+${spec.idColumn}` : asc(spec.idColumn)];
  const perPage = Math.min(params.results_per_page ?? 10, spec.maxPerPage ?? 100);
  const window = (take: number, skip: number) => {
    const page = (columns: Record<string, SQLiteColumn>) => sql`${db.select(columns).from(spec.table).where(where).orderBy(...orderBy).limit(take).offset(skip)}`;
    if ("json" in spec) return { rows: db.select({ json: spec.json }).from(spec.table).where(where).orderBy(...orderBy).limit(take).offset(skip) as unknown as BatchQuery<JsonRow> };
    return {
      rows: (spec.columns ? db.select(spec.columns) : db.select()).from(spec.table).where(where).orderBy(...orderBy).limit(take).offset(skip) as unknown as BatchQuery<Row>,
      related: take > 0 ? spec.related?.(page({ id: spec.idColumn }), page) : undefined,
    };
  };
  const common = { single: query.single, offset: query.offset, limit: query.limit, perPage };
  if (query.single) return { ...window(2, query.offset), take: 2, ...common };
  // `limit`/`offset` of q cut the result set; pages are taken from what remains.
  const start = query.offset + (params.page - 1) * perPage;
  const endCap = query.limit === undefined ? Infinity : query.offset + query.limit;
  const take = Math.max(0, Math.min(perPage, endCap - start));
  const total = db.select({ total: count() }).from(spec.table).where(where) as unknown as BatchQuery<{ total: number }>;
  return { ...window(take, start), total, take, ...common };
}

/**
 * Runs a list request (`listStatements`) in one D1 round trip.
 * `single: true` answers the object itself (404 none, 422 several).
 */
export async function listObjects<Row, Out, Related = never>(db: Db, spec: ListSpec<Row, Out, Related>, params: ListParams): Promise<Envelope<Out> | Out> {
  const list = listStatements(db, spec, params);
  const related = (answers: unknown[]) => (list.related ? (answers.pop() as Related[]) : []);

  if (list.single) {
    const answers: unknown[] = await db.batch(list.related ? [list.rows, list.related] : [list.rows]);
    const found = related(answers);
    const rows = answers[0] as Row[];
    if (rows.length === 0) throw notFound();
    if (rows.length > 1) throw unprocessable("single: the query matches more than one object", "q");
    return (await spec.present(rows, found))[0];
  }

  const answers: unknown[] = await db.batch(list.related ? [list.rows, list.total!, list.related] : [list.rows, list.total!]);
  const found = related(answers);
  const [rows, [{ total }]] = answers as [Row[], { total: number }[]];
  return { ...pageCounts(list, params, total), objects: list.take > 0 ? await spec.present(rows, found) : [] };
}

/** The envelope's numbers from the count of all matches (`q.offset` and `q.limit` cut the matches). */
function pageCounts(list: ListStatements<unknown, unknown>, params: ListParams, total: number) {
  const matched = Math.max(0, Math.min(total - list.offset, list.limit ?? Infinity));
  return { num_results: matched, page: params.page, total_pages: Math.ceil(matched / list.perPage) };
}

/**
 * `listObjects` of a `JsonListSpec`, in one D1 round trip: the answer's JSON
 * text (the envelope, or the object itself for `single`), its objects as
 * SQLite built them.
 */
export async function listJson(db: Db, spec: JsonListSpec, params: ListParams): Promise<string> {
  const list = listStatements(db, spec, params);
  if (list.single) {
    const [rows] = (await db.batch([list.rows])) as [JsonRow[]];
    if (rows.length === 0) throw notFound();
    if (rows.length > 1) throw unprocessable("single: the query matches more than one object", "q");
    return rows[0].json;
  }
  const [rows, [{ total }]] = (await db.batch([list.rows, list.total!])) as [JsonRow[], { total: number }[]];
  return envelopeJson(list.take > 0 ? rows.map((r) => r.json) : [], pageCounts(list, params, total));
}

/** An in-memory list (lookup values) paged like every list. */
export function pageOf<T>(all: readonly T[], params: { page: number; results_per_page?: number }): Envelope<T> {
  const perPage = Math.min(params.results_per_page ?? 10, 100);
  const start = (params.page - 1) * perPage;
  return { num_results: all.length, objects: all.slice(start, start + perPage), page: params.page, total_pages: Math.ceil(all.length / perPage) };
}

/** A list answered whole, as page 1 of the envelope. */
export const allOnOnePage = <T>(objects: T[]): Envelope<T> => ({ num_results: objects.length, objects, page: 1, total_pages: objects.length ? 1 : 0 });
