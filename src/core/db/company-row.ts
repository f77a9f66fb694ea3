import { type SQL, and, eq } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import type { Db } from "../context";
import { notFound } from "../errors";

type CompanyTable = SQLiteTable & { id: SQLiteColumn; company_id: SQLiteColumn };

/**
 * The row of `table` with this id that belongs to the company (and matches
 * `also`, e.g. a user type), else 404 naming `what`: another company's ids
 * behave as unknown.
 */
export async function companyRow<T extends CompanyTable>(db: Db, table: T, companyId: number, id: number, what: string, also?: SQL): Promise<T["$inferSelect"]> {
  const [row] = await db
    .select()
    .from(table as SQLiteTable)
    .where(and(eq(table.id, id), eq(table.company_id, companyId), also));
  if (!row) throw notFound(what);
  return row as T["$inferSelect"];
}
