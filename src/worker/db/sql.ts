import { type SQL, type SQLWrapper, sql } from "drizzle-orm";

/**
 * `column IN (values)` with the whole list bound as ONE JSON parameter:
 * D1 allows at most 100 bound parameters per statement, so `inArray` over
 * a page of ids or a routing request's deliveries would fail.
 */
export const inList = (column: SQLWrapper, values: readonly (number | string)[]): SQL =>
  sql`${column} in (select value from json_each(${JSON.stringify(values)}))`;
