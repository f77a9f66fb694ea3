/**
 * Shards: companies live on one of several D1 databases (docs/operations/shards.md).
 *
 * - Shard 0 is the binding `DB`, shard n the binding `DB_SHARD_<n>` (declared in
 *   wrangler.toml, without gaps). Every shard runs every migration, so each holds
 *   the reference data (gazetteer, postal areas) too.
 * - The directory (`company_directory`, first database only) says where each
 *   company lives; a company without a row lives on the first database.
 * - `envForShard` gives the bindings with `DB` naming the company's shard: every
 *   service, the company's Durable Object and the queue consumers keep using
 *   `env.DB` and so query the company's shard without knowing about shards.
 * - Ids of company data are unique across shards: each shard allocates from its own
 *   block of 10^12 ids (`shard_blocks`), so a moved company keeps its ids.
 */
import { eq, sql } from "drizzle-orm";
import type { Env } from "../env";
import { createDb } from "./client";
import { SEQUENCED_TABLES } from "./company-tables";
import { companyDirectory } from "./schema";

/** Ids per block: shard blocks hold 10^12 ids each; 9000 blocks fit below 2^53. */
export const ID_BLOCK = 1_000_000_000_000;
/** How long an isolate trusts what it read from the directory (moves wait longer than this, MOVE_GRACE_SECONDS). */
export const DIRECTORY_CACHE_MS = 60_000;

/** The first database: the directory, the id blocks and shard 0. */
export const directoryDb = (env: Env): D1Database => env.DIRECTORY ?? env.DB;

/** The binding of shard `n`, undefined when not declared. */
export function shardBinding(env: Env, n: number): D1Database | undefined {
  if (n === 0) return directoryDb(env);
  return (env as unknown as Record<string, D1Database | undefined>)[`DB_SHARD_${n}`];
}

/** Shards declared: `DB`, then `DB_SHARD_1`, `DB_SHARD_2`, ... up to the first missing one. */
export function shardCount(env: Env): number {
  let n = 1;
  while (shardBinding(env, n)) n++;
  return n;
}

/** The bindings with `DB` naming shard `shard` (and `DIRECTORY` the first database). */
export function envForShard(env: Env, shard: number): Env {
  const db = shardBinding(env, shard);
  if (!db) throw new Error(`No D1 binding for shard ${shard} (DB_SHARD_${shard} in wrangler.toml)`);
  return { ...env, DB: db, DIRECTORY: directoryDb(env) };
}

/** Where a company lives and whether it accepts writes. */
export interface Placement {
  shard: number;
  readOnly: boolean;
}

const FIRST: Placement = { shard: 0, readOnly: false };

/** The directory row of a company by slug or id; null when it has none (it lives on the first database). */
export async function directoryEntry(env: Env, key: { slug: string } | { id: number }) {
  const db = createDb(directoryDb(env));
  const [row] = await db
    .select()
    .from(companyDirectory)
    .where("slug" in key ? eq(companyDirectory.slug, key.slug) : eq(companyDirectory.company_id, key.id))
    .limit(1);
  return row ?? null;
}

const placements = new Map<number, { placement: Placement; until: number }>();

/** Where company `companyId` lives, cached for DIRECTORY_CACHE_MS (the Durable Object, queue consumers, cron). */
export async function placementOf(env: Env, companyId: number): Promise<Placement> {
  const hit = placements.get(companyId);
  if (hit && hit.until > Date.now()) return hit.placement;
  const row = await directoryEntry(env, { id: companyId });
  const placement = row ? { shard: row.shard, readOnly: row.read_only } : FIRST;
  if (placements.size > 10_000) placements.clear();
  placements.set(companyId, { placement, until: Date.now() + DIRECTORY_CACHE_MS });
  return placement;
}

/** This isolate forgets what it knew of a company's placement (the move command, after changing it). */
export function forgetPlacement(companyId: number) {
  placements.delete(companyId);
}

/** The bindings of company `companyId`'s shard. */
export async function envForCompany(env: Env, companyId: number): Promise<Env> {
  return envForShard(env, (await placementOf(env, companyId)).shard);
}

/** The shard of a new company: `shard` when the operator names one, else by SHARD_FOR_NEW_COMPANIES (a number, or `least-loaded`: fewest companies, lowest shard first). */
export async function shardForNewCompany(env: Env): Promise<number> {
  const count = shardCount(env);
  const rule = (env.SHARD_FOR_NEW_COMPANIES ?? "least-loaded").trim();
  if (/^\d+$/.test(rule) && Number(rule) < count) return Number(rule);
  const rows = await createDb(directoryDb(env))
    .select({ shard: companyDirectory.shard, companies: sql<number>`count(*)` })
    .from(companyDirectory)
    .groupBy(companyDirectory.shard);
  const load = Array.from({ length: count }, (_, shard) => rows.find((r) => r.shard === shard)?.companies ?? 0);
  return load.indexOf(Math.min(...load));
}

/**
 * Makes sure shard `shard` allocates ids from a block of its own: the first database
 * keeps block 0 (its ids start at 1); any other shard takes the next free block the
 * first time a company is placed on it. Idempotent.
 */
export async function ensureShardBlock(env: Env, shard: number): Promise<void> {
  const home = directoryDb(env);
  const known = await home.prepare("select block from shard_blocks where shard = ?").bind(shard).first<{ block: number }>();
  if (known) {
    // Idempotent: a table of company data added since the shard took its block gets its sequence too.
    if (shard !== 0) await raiseSequences(envForShard(env, shard).DB, known.block * ID_BLOCK);
    return;
  }
  await home.prepare("insert or ignore into shard_blocks (shard, block) values (0, 0)").run();
  if (shard === 0) return;
  await home.prepare("insert or ignore into shard_blocks (shard, block) select ?, max(block) + 1 from shard_blocks").bind(shard).run();
  const row = await home.prepare("select block from shard_blocks where shard = ?").bind(shard).first<{ block: number }>();
  await raiseSequences(envForShard(env, shard).DB, row!.block * ID_BLOCK);
}

/**
 * Shard `shard` takes a fresh block above every block in use (before a company moves
 * onto it): the ids it hands out from now on are above every id of the moving
 * company, so the company's ids keep growing with time, and no other shard hands
 * them out. Returns the block.
 */
export async function takeFreshBlock(env: Env, shard: number): Promise<number> {
  await ensureShardBlock(env, shard);
  const home = directoryDb(env);
  const row = await home
    .prepare("update shard_blocks set block = (select max(block) + 1 from shard_blocks) where shard = ? returning block")
    .bind(shard)
    .first<{ block: number }>();
  await raiseSequences(envForShard(env, shard).DB, row!.block * ID_BLOCK);
  return row!.block;
}

/** Sets every sequence of company data on `d1` to at least `floor` (SQLite's AUTOINCREMENT never hands out an id at or below its sequence). */
async function raiseSequences(d1: D1Database, floor: number): Promise<void> {
  await d1.batch(
    SEQUENCED_TABLES.flatMap((table) => [
      d1.prepare("insert into sqlite_sequence (name, seq) select ?1, ?2 where not exists (select 1 from sqlite_sequence where name = ?1)").bind(table, floor),
      d1.prepare("update sqlite_sequence set seq = max(seq, ?2) where name = ?1").bind(table, floor),
    ]),
  );
}

/** Shards a move is under way from or to (their retention waits: it would change rows being copied and verified). */
export async function shardsInMoves(env: Env): Promise<Set<number>> {
  const rows = await createDb(directoryDb(env))
    .select({ shard: companyDirectory.shard, move: companyDirectory.move })
    .from(companyDirectory)
    .where(sql`${companyDirectory.move} is not null`);
  return new Set(rows.flatMap((r) => [r.shard, Number((r.move as { to?: number } | null)?.to ?? r.shard)]));
}

/** Registers a new company in the directory. */
export async function registerCompany(env: Env, companyId: number, slug: string, shard: number): Promise<void> {
  await createDb(directoryDb(env)).insert(companyDirectory).values({ company_id: companyId, slug, shard });
}
