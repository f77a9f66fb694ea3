import { type SQL, and, asc, count } from "drizzle-orm";
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

export interface ListSpec<Row, Out> {
  table: SQLiteTable;
  /** Tenant scope and any fixed condition (e.g. usertype), always applied. */
  scope: SQL | undefined;
  fields: FieldMap;
  idColumn: SQLiteColumn;
  /** Page size cap (100; 10 for postal-code areas). */
  maxPerPage?: number;
  present: (rows: Row[]) => Promise<Out[]> | Out[];
}

/**
 * Runs a list request: the compiled `q` inside the tenant scope, one page of
 * rows and the total count in one D1 round trip. `single: true` answers the
 * object itself (404 none, 422 several).
 */
export async function listObjects<Row, Out>(db: Db, spec: ListSpec<Row, Out>, params: ListParams): Promise<Envelope<Out> | Out> {
  const query = compileQuery(params.q, spec.fields);
  const where = and(spec.scope, query.where);
  const orderBy = [...query.orderBy, asc(spec.idColumn)];
  const maxPerPage = spec.maxPerPage ?? 100;
  const perPage = Math.min(params.results_per_page ?? 10, maxPerPage);

  if (query.single) {
    const rows = (await db.select().from(spec.table).where(where).orderBy(...orderBy).limit(2).offset(query.offset)) as Row[];
    if (rows.length === 0) throw notFound();
    if (rows.length > 1) throw unprocessable("single: the query matches more than one object", "q");
    return (await spec.present(rows))[0];
  }

  // `limit`/`offset` of q cut the result set; pages are taken from what remains.
  const start = query.offset + (params.page - 1) * perPage;
  const endCap = query.limit === undefined ? Infinity : query.offset + query.limit;
  const take = Math.max(0, Math.min(perPage, endCap - start));
  const [rows, [{ total }]] = await db.batch([
    db.select().from(spec.table).where(where).orderBy(...orderBy).limit(take).offset(start),
    db.select({ total: count() }).from(spec.table).where(where),
  ]);
  const matched = Math.max(0, Math.min(total - query.offset, query.limit ?? Infinity));
  return {
    num_results: matched,
    objects: take > 0 ? await spec.present(rows as Row[]) : [],
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
