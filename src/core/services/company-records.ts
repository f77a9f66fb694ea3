/** The company as its own users read it: its record, its centre address and its dispatchers. */
import { and, eq } from "drizzle-orm";
import { companyRow } from "../db/company-row";
import type { Company, Db } from "../context";
import { type ListParams, listObjects } from "../db/list";
import { addresses, companies, users } from "../db/schema";
import { notFound } from "../errors";
import type { FieldMap } from "../lib/filters";
import { presentAddress } from "./addresses";
import { type Language, storedSettings } from "./company-settings";
import { type UserRow, presentUser } from "./users";

/** The company's record with its settings (GET /company). */
export async function companyRecord(db: Db, companyId: number) {
  const [row] = await db.select().from(companies).where(eq(companies.id, companyId));
  const { id, companyname, location_id, pricing_package, test_phase } = row;
  return { id, companyname, location_id, pricing_package, test_phase, ...storedSettings(row) };
}

/** The language the company's pages and messages speak (German when unknown). */
export async function companyLanguage(db: Db, companyId: number): Promise<Language> {
  const [row] = await db.select({ language: companies.language }).from(companies).where(eq(companies.id, companyId));
  return (row?.language as Language | undefined) ?? "de";
}

/** The company's centre (its depot), or 404. */
export async function companyAddress(db: Db, company: Company) {
  if (company.location_id === null) throw notFound("Company address");
  const [row] = await db
    .select()
    .from(addresses)
    .where(and(eq(addresses.id, company.location_id), eq(addresses.company_id, company.id)));
  if (!row) throw notFound("Company address");
  return presentAddress(row);
}

export const userFields: FieldMap = {
  id: { column: users.id, type: "integer" },
  firstname: { column: users.firstname, type: "text" },
  lastname: { column: users.lastname, type: "text" },
  email: { column: users.email, type: "text" },
  active: { column: users.active, type: "boolean" },
  confirmed_at: { column: users.confirmed_at, type: "datetime" },
  expires: { column: users.expires, type: "datetime" },
  usertype: { column: users.usertype, type: "text" },
};

const dispatchers = (companyId: number) => and(eq(users.company_id, companyId), eq(users.usertype, "dispatcher"))!;

export const listDispatchers = (db: Db, companyId: number, params: ListParams) =>
  listObjects(db, { table: users, scope: dispatchers(companyId), fields: userFields, idColumn: users.id, present: (rows: UserRow[]) => rows.map(presentUser) }, params);

export const getDispatcher = async (db: Db, companyId: number, id: number) => presentUser(await companyRow(db, users, companyId, id, "Dispatcher", eq(users.usertype, "dispatcher")));
