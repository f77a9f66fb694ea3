import { type SQL, and, asc, count, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import type { Db } from "../env";
import { notFound, unprocessable } from "../errors";
import { type FieldMap, compileQuery } from "../lib/filters";

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
  /** Page size cap (100; 10 for postal-code areas). */
  maxPerPage?: number;
  /**
   * Rows the presentation needs besides the page (addresses, positions),
   * loaded in the same round trip: `pageIds` is the parenthesised subquery
   * of the page's ids (`x in ${pageIds}`).
   */
  related?: (pageIds: SQL) => BatchQuery<Related>;
  present: (rows: Row[], related: Related[]) => Promise<Out[]> | Out[];
}

/**
 * Runs a list request: the compiled `q` inside the tenant scope, one page of
 * rows, the total count and the related rows in one D1 round trip.
 * `single: true` answers the object itself (404 none, 422 several).
 */
export async function listObjects<Row, Out, Related = never>(db: Db, spec: ListSpec<Row, Out, Related>, params: ListParams): Promise<Envelope<Out> | Out> {
  const query = compileQuery(params.q, spec.fields);
  const where = and(spec.scope, query.where);
  const orderBy = [...query.orderBy, asc(spec.idColumn)];
  const maxPerPage = spec.maxPerPage ?? 100;
  const perPage = Math.min(params.results_per_page ?? 10, maxPerPage);
  const window = (take: number, skip: number) => {
    const ids = db.select({ id: spec.idColumn }).from(spec.table).where(where).orderBy(...orderBy).limit(take).offset(skip);
    const related = spec.related?.(sql`${ids}`);
    return { rows: db.select().from(spec.table).where(where).orderBy(...orderBy).limit(take).offset(skip), related };
  };

  if (query.single) {
    const page = window(2, query.offset);
    const [rows, related] = page.related ? await db.batch([page.rows, page.related]) : [await page.rows, []];
    if (rows.length === 0) throw notFound();
    if (rows.length > 1) throw unprocessable("single: the query matches more than one object", "q");
    return (await spec.present(rows as Row[], related as Related[]))[0];
  }

  // `limit`/`offset` of q cut the result set; pages are taken from what remains.
  const start = query.offset + (params.page - 1) * perPage;
  const endCap = query.limit === undefined ? Infinity : query.offset + query.limit;
  const take = Math.max(0, Math.min(perPage, endCap - start));
  const page = window(take, start);
  const total = db.select({ total: count() }).from(spec.table).where(where);
  const [rows, [{ total: all }], related] = page.related && take > 0 ? await db.batch([page.rows, total, page.related]) : [...(await db.batch([page.rows, total])), []];
  const matched = Math.max(0, Math.min(all - query.offset, query.limit ?? Infinity));
  return {
    num_results: matched,
    objects: take > 0 ? await spec.present(rows as Row[], related as Related[]) : [],
    page: params.page,
    total_pages: Math.ceil(matched / perPage),
  };
}

/** An in-memory list (lookup values) paged like every list. */
export function pageOf<T>(all: readonly T[], params: { page: number; results_per_page?: number }): Envelope<T> {
  const perPage = Math.min(params.results_per_page ?? 10, 100);
  const start = (params.page - 1) * perPage;
  return { num_results: all.length, objects: all.slice(start, start + perPage), page: params.page, total_pages: Math.ceil(all.length / perPage) };
}

/** A list answered whole, as page 1 of the envelope. */
export const allOnOnePage = <T>(objects: T[]): Envelope<T> => ({ num_results: objects.length, objects, page: 1, total_pages: objects.length ? 1 : 0 });
