/**
 * The operator's administration of companies (contract.md §3, not
 * tenant-scoped): create one with its first dispatcher on a shard, change
 * its name and settings, add users, read its outbox, see the shards.
 */
import { eq, sql } from "drizzle-orm";
import type { Role } from "../context";
import { createDb } from "../db/client";
import { type ListParams, listObjects } from "../db/list";
import { addresses, companies, companyDirectory, outbox, users } from "../db/schema";
import { directoryDb, ensureShardBlock, envForShard, registerCompany, shardCount, shardForNewCompany } from "../db/shards";
import type { Env } from "../env";
import { conflict, notFound, unprocessable } from "../errors";
import type { FieldMap } from "../lib/filters";
import { type AddressInputType, resolveAddressInput } from "./address-input";
import { findPlacedCompany } from "./company-lookup";
import { type CompanySettings, settingsOf, storedSettings } from "./company-settings";
import { prepareUser, presentUser } from "./users";

/** The company named by the slug on its shard, with that shard's bindings and database, or 404. */
export async function operatorCompany(env: Env, slug: string) {
  const placed = await findPlacedCompany(env, slug);
  if (!placed) throw notFound("Company");
  const shardEnv = envForShard(env, placed.shard);
  return { ...placed.company, env: shardEnv, db: createDb(shardEnv.DB) };
}

interface Person {
  email: string;
  password: string;
  firstname?: string;
  lastname?: string;
}

export interface NewCompany extends Partial<CompanySettings> {
  slug: string;
  companyname: string;
  /** The D1 database to place it on; by default the deployment's rule (SHARD_FOR_NEW_COMPANIES). */
  shard?: number;
  /** The company centre and default start of tours; geocoded without a coordinate. */
  depot?: AddressInputType;
  dispatcher: Person;
}

/** Creates a company with its depot and first dispatcher in one batch on its shard, then enters it in the directory. */
export async function createCompany(env: Env, input: NewCompany) {
  if (await findPlacedCompany(env, input.slug)) throw conflict(`Company ${input.slug} exists`, "slug");
  if (input.shard !== undefined && input.shard >= shardCount(env)) throw unprocessable(`shard must be below ${shardCount(env)}, the number of shards of this deployment`, "shard");
  const shard = input.shard ?? (await shardForNewCompany(env));
  await ensureShardBlock(env, shard);
  const shardEnv = envForShard(env, shard);
  const db = createDb(shardEnv.DB);
  const depot = input.depot ? await resolveAddressInput(shardEnv, null, input.depot, "depot.") : null;
  // One batch, all or nothing: rows refer to the new company through its unique slug.
  const companyId = sql`(select id from ${companies} where ${companies.slug} = ${input.slug})`;
  const { insert: dispatcher } = await prepareUser(db, companyId, { usertype: "dispatcher", ...input.dispatcher, confirmed: true, active: true });
  const [[company]] = await db.batch([
    db.insert(companies).values({ slug: input.slug, companyname: input.companyname, ...settingsOf(input) }).returning(),
    ...(depot
      ? [
          db.insert(addresses).values({ ...depot, company_id: companyId, addresstype: "depot" }),
          db
            .update(companies)
            .set({ location_id: sql`(select max(id) from ${addresses} where ${addresses.company_id} = ${companyId})` })
            .where(eq(companies.slug, input.slug)),
        ]
      : []),
    dispatcher,
  ] as const);
  try {
    await registerCompany(env, company.id, company.slug, shard);
  } catch (error) {
    // The same slug registered at the same moment on another shard: this one gives way.
    await db.batch([db.delete(users).where(eq(users.company_id, company.id)), db.delete(addresses).where(eq(addresses.company_id, company.id)), db.delete(companies).where(eq(companies.id, company.id))]);
    throw error;
  }
  return { id: company.id, slug: company.slug, shard };
}

/** Changes a company's name and settings; fields left out stay as they are. */
export async function updateCompany(env: Env, slug: string, patch: Partial<CompanySettings> & { companyname?: string }) {
  const company = await operatorCompany(env, slug);
  const changes = { ...settingsOf(patch), ...(patch.companyname !== undefined ? { companyname: patch.companyname } : {}) };
  const [row] = Object.keys(changes).length
    ? await company.db.update(companies).set(changes).where(eq(companies.id, company.id)).returning()
    : await company.db.select().from(companies).where(eq(companies.id, company.id));
  return { id: row.id, slug: row.slug, companyname: row.companyname, ...storedSettings(row) };
}

/** Adds a confirmed user; a driver starts inactive and gets its activation code in the answer. */
export async function createCompanyUser(env: Env, slug: string, input: Person & { usertype: Role }) {
  const company = await operatorCompany(env, slug);
  const { code, insert } = await prepareUser(company.db, company.id, { ...input, confirmed: true, active: input.usertype !== "driver" });
  const [user] = await insert;
  return { ...presentUser(user), ...(user.usertype === "driver" ? { code } : {}) };
}

export const outboxFields: FieldMap = {
  id: { column: outbox.id, type: "integer" },
  to: { column: outbox.to, type: "text" },
  template: { column: outbox.template, type: "text" },
  status: { column: outbox.status, type: "text" },
  channel: { column: outbox.channel, type: "text" },
  created_at: { column: outbox.created_at, type: "datetime" },
  sent_at: { column: outbox.sent_at, type: "datetime" },
  attempts: { column: outbox.attempts, type: "integer" },
};

/** A page of the company's outgoing messages. */
export async function companyOutbox(env: Env, slug: string, query: ListParams) {
  const company = await operatorCompany(env, slug);
  return listObjects(
    company.db,
    { table: outbox, scope: eq(outbox.company_id, company.id), fields: outboxFields, idColumn: outbox.id, present: (rows: (typeof outbox.$inferSelect)[]) => rows.map((r) => ({ ...r, data: r.data ?? null })) },
    query,
  );
}

/** Every shard of the deployment: its binding, how many companies it holds and which are moving. */
export async function shardOverview(env: Env) {
  const rows = await createDb(directoryDb(env)).select({ shard: companyDirectory.shard, slug: companyDirectory.slug, move: companyDirectory.move }).from(companyDirectory);
  return Array.from({ length: shardCount(env) }, (_, shard) => ({
    shard,
    binding: shard === 0 ? "DB" : `DB_SHARD_${shard}`,
    companies: rows.filter((r) => r.shard === shard).length,
    moving: rows.filter((r) => r.shard === shard && r.move !== null).map((r) => r.slug),
  }));
}
