/**
 * Moving a company to another shard (docs/operations/shards.md, the runbook):
 * an operator command that copies, verifies and switches, one bounded step per
 * call (`POST /_operator/companies/<slug>/move`, `npm run operator -- move-company`).
 *
 *   precopy   while the company works as ever: its positions, event log and webhook logs (the bulk of
 *             its rows; never updated, only appended) are copied up to the newest row,
 *             and checksummed on both shards up to there (`preverify`);
 *   freeze    the company turns read-only (writes answer 503 + Retry-After, queue
 *             messages wait, alarms write nothing); the target shard takes a fresh
 *             id block; then MOVE_GRACE_SECONDS pass, so no isolate still trusts a
 *             cached placement that allows writes (caches hold DIRECTORY_CACHE_MS);
 *   copy      table by table, parents first, in batches by rowid (INSERT OR IGNORE:
 *             a copy cut off anywhere is simply continued); the pre-copied tables
 *             only from where the pre-copy stopped;
 *   verify    per table, row count and a checksum of every row on both shards (the
 *             pre-copied tables go on from their pre-verified sums); a difference
 *             wipes the copy (`reset`) and copies again;
 *   switch    the directory names the target (still read-only), MOVE_GRACE_SECONDS
 *             pass again so every isolate reads from the target, then writes resume;
 *   cleanup   the company's rows leave the old shard, children first, in batches.
 *
 * The state lives in the directory row (`company_directory.move`): every step reads
 * it, does a bounded amount of work and writes it back, so the command resumes
 * wherever it stopped. Each step is idempotent.
 */
import { eq } from "drizzle-orm";
import { createDb } from "../db/client";
import { MOVED_TABLES } from "../db/company-tables";
import { companyDirectory } from "../db/schema";
import { directoryDb, envForShard, forgetPlacement, shardCount, takeFreshBlock } from "../db/shards";
import type { Env } from "../env";
import { conflict, notFound, unprocessable } from "../errors";
import { log } from "../lib/log";
import { forgetCompany } from "./company-lookup";

/**
 * Tables only ever appended to (and pruned by retention, which waits while a move involves the
 * shard), with an integer key (the same rowids on both shards): copied and checked before the
 * freeze, so the company is read-only only for what changed since and for the rest.
 */
const APPEND_ONLY = new Set<string>(["driver_tracking", "events", "webhook_deliveries"]);
/** The rows those refer to (foreign keys), copied first by the pre-copy; the frozen copy writes them again over what the pre-copy wrote (upsert by id). */
const PARENTS = ["companies", "users", "webhooks"];

/** Rows read per query, rows copied or deleted per step (a step stays far inside D1's limits and the Worker's CPU time). */
const PAGE = 500;
const STEP_ROWS = 5000;
/** Bytes of JSON per insert statement (D1 takes values up to 2 MB). */
const INSERT_BYTES = 500_000;

export type MovePhase = "precopy" | "preverify" | "freeze" | "copy" | "verify" | "reset" | "switched" | "cleanup" | "done";

interface Side {
  after: number;
  rows: number;
  /** Sum of the rows' 53-bit hashes modulo 2^53, as a decimal string. */
  sum: string;
}

export interface MoveState {
  from: number;
  to: number;
  phase: MovePhase;
  /** When the phase began (ms): freeze and switched wait MOVE_GRACE_SECONDS from here. */
  since: number;
  /** Index in MOVED_TABLES and the last rowid done there. */
  table: number;
  after: number;
  /** Verify: where each side's reading stands. */
  source?: Side;
  target?: Side;
  /** Per append-only table: the newest rowid pre-copied and the checksums of both sides up to it. */
  marks?: Record<string, { upTo: number; source?: Side; target?: Side; verified?: boolean }>;
  /** Rows copied, tables verified, verifications failed so far. */
  copied: number;
  verified: { table: string; rows: number; checksum: string }[];
  failures: number;
}

const scope = (table: string) => (table === "companies" ? "id = ?" : "company_id = ?");

const columnsOf = new Map<string, string[]>();

async function columns(d1: D1Database, table: string): Promise<string[]> {
  let known = columnsOf.get(table);
  if (!known) {
    const { results } = await d1.prepare("select name from pragma_table_info(?) order by cid").bind(table).all<{ name: string }>();
    known = results.map((r) => r.name);
    columnsOf.set(table, known);
  }
  return known;
}

const quoted = (names: string[]) => names.map((n) => `"${n}"`).join(", ");

/** The next page of a company's rows in a table by rowid: `[rowid, ...values]`. */
async function page(d1: D1Database, table: string, companyId: number, after: number, cols: string[], upTo = Number.MAX_SAFE_INTEGER): Promise<unknown[][]> {
  return d1
    .prepare(`select rowid as "__rowid", ${quoted(cols)} from "${table}" where ${scope(table)} and rowid > ? and rowid <= ? order by rowid limit ${PAGE}`)
    .bind(companyId, after, upTo)
    .raw<unknown[]>() as Promise<unknown[][]>;
}

/** Inserts rows (values in `cols` order) that are not there yet, in statements of at most INSERT_BYTES of JSON. */
async function insertRows(d1: D1Database, table: string, cols: string[], rows: unknown[][]): Promise<void> {
  const values = cols.map((_, i) => `json_extract(value, '$[${i}]')`).join(", ");
  // Parents may have changed since the pre-copy wrote them: the newer values win. (`where true`: SQLite's upsert after a SELECT needs it.)
  const statement = PARENTS.includes(table)
    ? `insert into "${table}" (${quoted(cols)}) select ${values} from json_each(?) where true order by key on conflict ("id") do update set ${cols.map((c) => `"${c}" = excluded."${c}"`).join(", ")}`
    : `insert or ignore into "${table}" (${quoted(cols)}) select ${values} from json_each(?) order by key`;
  const statements: D1PreparedStatement[] = [];
  let chunk: unknown[][] = [];
  let bytes = 0;
  const flush = () => {
    if (chunk.length) statements.push(d1.prepare(statement).bind(JSON.stringify(chunk)));
    chunk = [];
    bytes = 0;
  };
  for (const row of rows) {
    const size = JSON.stringify(row).length;
    if (bytes + size > INSERT_BYTES) flush();
    chunk.push(row);
    bytes += size;
  }
  flush();
  if (statements.length) await d1.batch(statements);
}

/** cyrb53: a fast 53-bit hash of a string (the checksum's unit; not a cryptographic hash). */
function hash53(text: string): bigint {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return BigInt(4294967296 * (2097151 & h2) + (h1 >>> 0));
}

const MOD = 2n ** 53n;

/** Reads one page of a side for the checksum: the sum of the rows' hashes does not depend on their order (rowids differ between shards for tables without an integer key). */
async function checksumPage(d1: D1Database, table: string, companyId: number, cols: string[], side: Side, upTo?: number): Promise<boolean> {
  const rows = await page(d1, table, companyId, side.after, cols, upTo);
  let sum = BigInt(side.sum);
  for (const row of rows) sum = (sum + hash53(JSON.stringify(row.slice(1)))) % MOD;
  side.sum = sum.toString();
  side.rows += rows.length;
  if (rows.length) side.after = Number(rows[rows.length - 1][0]);
  return rows.length < PAGE;
}

/** Deletes up to `budget` of the company's rows on `d1`, children first, from table index `table` backwards; returns where it stands. */
async function deleteRows(d1: D1Database, companyId: number, table: number, budget: number): Promise<{ table: number; deleted: number }> {
  let deleted = 0;
  while (table >= 0 && deleted < budget) {
    const name = MOVED_TABLES[table];
    const gone = await d1
      .prepare(`delete from "${name}" where rowid in (select rowid from "${name}" where ${scope(name)} limit ${PAGE})`)
      .bind(companyId)
      .run();
    deleted += gone.meta.changes;
    if (gone.meta.changes < PAGE) table--;
  }
  return { table, deleted };
}

const graceMs = (env: Env) => Number(env.MOVE_GRACE_SECONDS ?? 70) * 1000;

/** What a step answers: the state, the seconds until the next step can go on, whether the move is over. */
export interface MoveProgress {
  slug: string;
  company_id: number;
  from: number;
  to: number;
  phase: MovePhase;
  table: string | null;
  copied: number;
  verified: { table: string; rows: number; checksum: string }[];
  failures: number;
  wait_seconds: number;
  done: boolean;
}

function progress(slug: string, companyId: number, state: MoveState, waitMs: number): MoveProgress {
  return {
    slug,
    company_id: companyId,
    from: state.from,
    to: state.to,
    phase: state.phase,
    table: state.phase === "done" ? null : (MOVED_TABLES[state.table] ?? null),
    copied: state.copied,
    verified: state.verified,
    failures: state.failures,
    wait_seconds: Math.max(0, Math.ceil(waitMs / 1000)),
    done: state.phase === "done",
  };
}

/**
 * One step of moving company `slug` to shard `to`: starts the move when none is
 * under way, else goes on with it. Call again until `done` (after `wait_seconds`).
 */
export async function moveCompanyStep(env: Env, slug: string, to: number): Promise<MoveProgress> {
  const home = createDb(directoryDb(env));
  const [entry] = await home.select().from(companyDirectory).where(eq(companyDirectory.slug, slug)).limit(1);
  if (!entry) throw notFound("Company");
  if (to >= shardCount(env)) throw unprocessable(`shard must be below ${shardCount(env)}, the number of shards of this deployment`, "shard");
  let state = entry.move as MoveState | null;
  if (state && state.to !== to) throw conflict(`Company ${slug} is moving to shard ${state.to}; finish that move first`, "shard");
  if (!state) {
    if (entry.shard === to) throw unprocessable(`Company ${slug} lives on shard ${to} already`, "shard");
    await takeFreshBlock(env, to);
    state = { from: entry.shard, to, phase: "precopy", since: Date.now(), table: 0, after: 0, copied: 0, verified: [], failures: 0, marks: {} };
    await home.update(companyDirectory).set({ move: { ...state } }).where(eq(companyDirectory.company_id, entry.company_id));
    log("info", "company move", { company_slug: slug, phase: "precopy", from: state.from, to });
  }
  const companyId = entry.company_id;
  const source = envForShard(env, state.from).DB;
  const target = envForShard(env, state.to).DB;
  const before = state.phase;
  let waitMs = 0;

  const save = async (extra: Partial<typeof companyDirectory.$inferInsert> = {}) =>
    home.update(companyDirectory).set({ move: state.phase === "done" ? null : { ...state }, ...extra }).where(eq(companyDirectory.company_id, companyId));

  const freeze = async () => {
    Object.assign(state, { phase: "freeze", since: Date.now(), table: 0, after: 0 });
    await save({ read_only: true });
    // This isolate knows at once; the others within DIRECTORY_CACHE_MS, which the grace period waits out.
    forgetCompany(slug);
    forgetPlacement(companyId);
    waitMs = graceMs(env);
  };
  const appendOnly = MOVED_TABLES.map((t, i) => [t, i] as const).filter(([t]) => APPEND_ONLY.has(t));
  const precopied = MOVED_TABLES.map((t, i) => [t, i] as const).filter(([t]) => APPEND_ONLY.has(t) || PARENTS.includes(t));

  switch (state.phase) {
    case "precopy": {
      // The company works meanwhile: only the append-only tables, each up to its newest row when the pre-copy reached it.
      let budget = STEP_ROWS;
      const marks = (state.marks ??= {});
      while (budget > 0 && state.table < precopied.length) {
        const [table] = precopied[state.table];
        const cols = await columns(source, table);
        if (!APPEND_ONLY.has(table)) {
          // A parent: what the positions and events refer to; copied again (upsert) once frozen.
          const rows = await page(source, table, companyId, state.after, cols);
          await insertRows(target, table, cols, rows.map((r) => r.slice(1)));
          budget -= rows.length + 1;
          if (rows.length) state.after = Number(rows[rows.length - 1][0]);
          if (rows.length < PAGE) Object.assign(state, { table: state.table + 1, after: 0 });
          continue;
        }
        marks[table] ??= { upTo: (await source.prepare(`select coalesce(max(rowid), 0) as n from "${table}" where ${scope(table)}`).bind(companyId).first<{ n: number }>())!.n };
        const rows = await page(source, table, companyId, state.after, cols, marks[table].upTo);
        await insertRows(target, table, cols, rows.map((r) => r.slice(1)));
        state.copied += rows.length;
        budget -= rows.length + 1;
        if (rows.length) state.after = Number(rows[rows.length - 1][0]);
        if (rows.length < PAGE) Object.assign(state, { table: state.table + 1, after: 0 });
      }
      if (state.table >= precopied.length) Object.assign(state, { phase: "preverify", table: 0, after: 0 });
      break;
    }
    case "preverify": {
      let pages = STEP_ROWS / PAGE;
      const marks = state.marks ?? {};
      while (pages > 0 && state.table < appendOnly.length) {
        const [table] = appendOnly[state.table];
        const mark = marks[table];
        const cols = await columns(source, table);
        mark.source ??= { after: 0, rows: 0, sum: "0" };
        mark.target ??= { after: 0, rows: 0, sum: "0" };
        const sourceDone = await checksumPage(source, table, companyId, cols, mark.source, mark.upTo);
        const targetDone = await checksumPage(target, table, companyId, cols, mark.target, mark.upTo);
        pages--;
        if (!sourceDone || !targetDone) continue;
        mark.verified = mark.source.rows === mark.target.rows && mark.source.sum === mark.target.sum;
        // A difference is no failure yet: the frozen copy and check then take the whole table.
        if (!mark.verified) log("error", "company move", { company_slug: slug, phase: "preverify", table, source_rows: mark.source.rows, target_rows: mark.target.rows });
        state.table++;
      }
      if (state.table >= appendOnly.length) await freeze();
      break;
    }
    case "freeze": {
      waitMs = state.since + graceMs(env) - Date.now();
      if (waitMs <= 0) Object.assign(state, { phase: "copy", table: 0, after: 0, since: Date.now() });
      break;
    }
    case "copy": {
      let budget = STEP_ROWS;
      while (budget > 0 && state.table < MOVED_TABLES.length) {
        const table = MOVED_TABLES[state.table];
        const mark = state.marks?.[table];
        // A pre-copied table goes on after its mark (the rows up to it never change).
        if (mark?.verified && state.after < mark.upTo) state.after = mark.upTo;
        const cols = await columns(source, table);
        const rows = await page(source, table, companyId, state.after, cols);
        await insertRows(target, table, cols, rows.map((r) => r.slice(1)));
        state.copied += rows.length;
        budget -= rows.length + 1;
        if (rows.length) state.after = Number(rows[rows.length - 1][0]);
        if (rows.length < PAGE) Object.assign(state, { table: state.table + 1, after: 0 });
      }
      if (state.table >= MOVED_TABLES.length) Object.assign(state, { phase: "verify", table: 0, verified: [], source: undefined, target: undefined });
      break;
    }
    case "verify": {
      let pages = STEP_ROWS / PAGE;
      while (pages > 0 && state.table < MOVED_TABLES.length) {
        const table = MOVED_TABLES[state.table];
        const cols = await columns(source, table);
        const mark = state.marks?.[table];
        // A pre-verified table goes on from its sums at the mark.
        state.source ??= mark?.verified ? { ...mark.source! } : { after: 0, rows: 0, sum: "0" };
        state.target ??= mark?.verified ? { ...mark.target! } : { after: 0, rows: 0, sum: "0" };
        const sourceDone = await checksumPage(source, table, companyId, cols, state.source);
        const targetDone = await checksumPage(target, table, companyId, cols, state.target);
        pages--;
        if (!sourceDone || !targetDone) continue;
        const same = state.source.rows === state.target.rows && state.source.sum === state.target.sum;
        if (!same) {
          // A copy that differs is thrown away: the target's rows of the company go, then everything is copied again.
          log("error", "company move", { company_slug: slug, phase: "verify", table, source_rows: state.source.rows, target_rows: state.target.rows, same_checksum: state.source.sum === state.target.sum });
          Object.assign(state, { phase: "reset", table: MOVED_TABLES.length - 1, after: 0, failures: state.failures + 1, source: undefined, target: undefined, marks: {} });
          break;
        }
        state.verified.push({ table, rows: state.source.rows, checksum: BigInt(state.source.sum).toString(16).padStart(14, "0") });
        Object.assign(state, { table: state.table + 1, source: undefined, target: undefined });
      }
      if (state.phase === "verify" && state.table >= MOVED_TABLES.length) {
        // Switch: the directory names the target; the company stays read-only until every cache has let go of the source.
        Object.assign(state, { phase: "switched", since: Date.now(), table: 0, after: 0 });
        await save({ shard: state.to });
        forgetCompany(slug);
        forgetPlacement(companyId);
        waitMs = graceMs(env);
      }
      break;
    }
    case "reset": {
      const wiped = await deleteRows(target, companyId, state.table, STEP_ROWS);
      state.table = wiped.table;
      if (wiped.table < 0) Object.assign(state, { phase: "copy", table: 0, after: 0, copied: 0 });
      break;
    }
    case "switched": {
      waitMs = state.since + graceMs(env) - Date.now();
      if (waitMs <= 0) {
        Object.assign(state, { phase: "cleanup", table: MOVED_TABLES.length - 1, since: Date.now() });
        await save({ read_only: false });
        forgetCompany(slug);
        forgetPlacement(companyId);
      }
      break;
    }
    case "cleanup": {
      const cleaned = await deleteRows(source, companyId, state.table, STEP_ROWS);
      state.table = cleaned.table;
      if (cleaned.table < 0) state.phase = "done";
      break;
    }
    case "done":
      break;
  }
  await save();
  if (state.phase !== before) log("info", "company move", { company_slug: slug, phase: state.phase, from: state.from, to: state.to, copied: state.copied, failures: state.failures });
  return progress(slug, companyId, state, waitMs);
}
