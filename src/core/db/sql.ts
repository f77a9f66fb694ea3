import { type SQL, type SQLWrapper, sql } from "drizzle-orm";
import { SQLiteSyncDialect } from "drizzle-orm/sqlite-core";

/**
 * `column IN (values)` with the whole list bound as ONE JSON parameter:
 * D1 allows at most 100 bound parameters per statement, so `inArray` over
 * a page of ids or a routing request's deliveries would fail.
 */
export const inList = (column: SQLWrapper, values: readonly (number | string)[]): SQL =>
  // One value as `=`: SQLite plans an equality on an indexed column reliably, the json_each subquery not always (a route's record).
  values.length === 1 ? sql`${column} = ${values[0]}` : sql`${column} in (select value from json_each(${JSON.stringify(values)}))`;

const dialect = new SQLiteSyncDialect();

/**
 * A D1 statement from a drizzle query builder or a `sql` template, for
 * `D1Database.batch`: drizzle's own batch cannot carry raw SQL with
 * parameters, and some writes (UPDATE … FROM json_each) need raw SQL.
 */
export function d1Statement(d1: D1Database, query: { toSQL(): { sql: string; params: unknown[] } } | SQL): D1PreparedStatement {
  const { sql: text, params } = "toSQL" in query ? query.toSQL() : dialect.sqlToQuery(query);
  return d1.prepare(text).bind(...params);
}
