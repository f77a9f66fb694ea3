/**
 * Postal-code areas as seen by a company, and the company's tour areas.
 *
 * Invariants:
 * - `postal_areas` is global reference data; a company sees it through its own
 *   `tour_area_members` rows, which give each postal-code area its `area_id`
 *   (the id of the company's tour area containing it, or null).
 * - A postal-code area belongs to at most one tour area per company. The check
 *   is repeated inside the write batch (a guard statement that fails the whole
 *   batch), so two concurrent requests cannot both take the same area.
 * - A tour area's `geom` is the union of its members' polygons, recomputed when
 *   the membership changes, unless the client sets `geom` itself.
 * - Every write is one D1 batch (all or nothing). Lists of values go into SQL as
 *   one JSON parameter (`json_each`), so D1's 100-parameter limit never applies.
 */
import { type SQL, and, eq, sql } from "drizzle-orm";
import { companyRow } from "../db/company-row";
import type { MultiPolygon } from "geojson";
import { postalAreas, tourAreaMembers, tourAreas, users } from "../db/schema";
import type { Db } from "../context";
import { conflict, unprocessable } from "../errors";
import { findPostalAreaForPoint, parseAreaGeometry, unionPostalAreas } from "../geo";
import type { FieldMap } from "../lib/filters";
import { type Envelope, type ListParams, listObjects } from "../db/list";
import { type AreaGeometry, asMultiPolygon, validateAreaGeometry } from "./area-geometry";
import { inList } from "../db/sql";

export interface AreaCtx {
  db: Db;
  d1: D1Database;
  companyId: number;
}

/** A postal-code area as the company sees it. */
export interface PlzArea {
  gid: number;
  plz: string;
  /** Place name. */
  note: string | null;
  /** Id of this company's tour area containing the postal-code area, null when none does. */
  area_id: number | null;
  geom: AreaGeometry;
}

/** A postal-code area inside a tour area's `plzareas` (no geometry: the tour area's `geom` covers them). */
export type PlzAreaBrief = Omit<PlzArea, "geom">;

export interface TourArea {
  id: number;
  areaname: string | null;
  /** Driver automatically assigned to tours built from deliveries in this area; null when unbound. */
  driver_id: number | null;
  /** Union of the member postal-code areas. */
  geom: MultiPolygon;
  /** The member postal-code areas, all on page 1. */
  plzareas: Envelope<PlzAreaBrief>;
}

const jsonList = (values: readonly (string | number)[]) => JSON.stringify(values);

// ---------------------------------------------------------------- postal-code areas

/** `area_id` of a postal-code area for one company: a correlated subquery over the membership. */
export const plzAreaIdSql = (companyId: number): SQL =>
  sql`(select ${tourAreaMembers.tourarea_id} from ${tourAreaMembers} where ${tourAreaMembers.company_id} = ${companyId} and ${tourAreaMembers.postal_area_gid} = ${postalAreas.gid} limit 1)`;

/** Filterable fields of `GET /plzarea` for one company. */
export const plzAreaFields = (companyId: number): FieldMap => ({
  gid: { column: postalAreas.gid, type: "integer" },
  plz: { column: postalAreas.plz, type: "text" },
  note: { column: postalAreas.note, type: "text" },
  source: { column: postalAreas.source, type: "text" },
  area_id: { column: plzAreaIdSql(companyId), type: "integer" },
});

type PostalAreaRow = typeof postalAreas.$inferSelect;

/** The company's tour area of each postal-code area (gid -> tour area id; absent when free). */
export async function tourAreaIdsOf(ctx: AreaCtx, gids: readonly number[]): Promise<Map<number, number>> {
  if (gids.length === 0) return new Map();
  const members = await ctx.db
    .select({ gid: tourAreaMembers.postal_area_gid, area_id: tourAreaMembers.tourarea_id })
    .from(tourAreaMembers)
    .where(and(eq(tourAreaMembers.company_id, ctx.companyId), inList(tourAreaMembers.postal_area_gid, gids)));
  return new Map(members.map((m) => [m.gid, m.area_id]));
}

/** Postal-code areas with the company's `area_id` (one query for the page). */
export async function presentPlzAreas(ctx: AreaCtx, rows: PostalAreaRow[]): Promise<PlzArea[]> {
  const areaOf = await tourAreaIdsOf(ctx, rows.map((r) => r.gid));
  return rows.map((r) => ({
    gid: r.gid,
    plz: r.plz,
    note: r.note,
    area_id: areaOf.get(r.gid) ?? null,
    geom: parseAreaGeometry(r.geom) ?? { type: "Polygon", coordinates: [] },
  }));
}

/** Every postal-code area with this company's `area_id`, without geometry (`GET /plzareas`). */
export async function plzAreaIndex(ctx: AreaCtx) {
  const { results } = await ctx.d1
    .prepare(
      `SELECT p.plz AS plz, p.gid AS gid, m.tourarea_id AS area_id
       FROM postal_areas p LEFT JOIN tour_area_members m ON m.postal_area_gid = p.gid AND m.company_id = ?1
       ORDER BY p.plz, p.gid`,
    )
    .bind(ctx.companyId)
    .all<{ plz: string; gid: number; area_id: number | null }>();
  return results;
}

// ---------------------------------------------------------------- tour areas: reading

/** Filterable fields of `GET /tourarea`; `plzareas` is a to-many relation (`any`) over gid, plz, note. */
export const tourAreaFields = (): FieldMap => ({
  id: { column: tourAreas.id, type: "integer" },
  areaname: { column: tourAreas.areaname, type: "text" },
  driver_id: { column: tourAreas.driver_id, type: "integer" },
  created_at: { column: tourAreas.created_at, type: "datetime" },
  plzareas: {
    relation: "many",
    fields: {
      gid: { column: postalAreas.gid, type: "integer" },
      plz: { column: postalAreas.plz, type: "text" },
      note: { column: postalAreas.note, type: "text" },
    },
    exists: (condition) =>
      sql`exists (select 1 from ${tourAreaMembers} join ${postalAreas} on ${postalAreas.gid} = ${tourAreaMembers.postal_area_gid} where ${tourAreaMembers.tourarea_id} = ${tourAreas.id} and ${condition})`,
  },
});

type TourAreaRow = typeof tourAreas.$inferSelect;

/** Tour areas with their member postal-code areas (one query for all of them). */
export async function presentTourAreas(ctx: AreaCtx, rows: TourAreaRow[]): Promise<TourArea[]> {
  if (rows.length === 0) return [];
  const { results } = await ctx.d1
    .prepare(
      `SELECT m.tourarea_id AS area_id, p.gid AS gid, p.plz AS plz, p.note AS note
       FROM tour_area_members m JOIN postal_areas p ON p.gid = m.postal_area_gid
       WHERE m.company_id = ?1 AND m.tourarea_id IN (SELECT value FROM json_each(?2))
       ORDER BY p.plz, p.gid`,
    )
    .bind(ctx.companyId, jsonList(rows.map((r) => r.id)))
    .all<{ area_id: number; gid: number; plz: string; note: string | null }>();
  const byArea = new Map<number, { gid: number; plz: string; note: string | null; area_id: number }[]>();
  for (const m of results) {
    const list = byArea.get(m.area_id) ?? [];
    list.push({ gid: m.gid, plz: m.plz, note: m.note, area_id: m.area_id });
    byArea.set(m.area_id, list);
  }
  return rows.map((r) => {
    const members = byArea.get(r.id) ?? [];
    return {
      id: r.id,
      areaname: r.areaname,
      driver_id: r.driver_id,
      geom: r.geom ?? { type: "MultiPolygon", coordinates: [] },
      plzareas: { num_results: members.length, objects: members, page: 1, total_pages: members.length ? 1 : 0 },
    };
  });
}

const tourAreaRow = (ctx: AreaCtx, id: number): Promise<TourAreaRow> => companyRow(ctx.db, tourAreas, ctx.companyId, id, "Tour area");

export async function getTourArea(ctx: AreaCtx, id: number): Promise<TourArea> {
  return (await presentTourAreas(ctx, [await tourAreaRow(ctx, id)]))[0];
}

// ---------------------------------------------------------------- tour areas: membership

interface MemberArea {
  gid: number;
  plz: string;
  geom: string;
}

/** A member given in `plzareas`: a gid (number), a postal code (string), or an object with `gid` or `plz`. */
export type MemberRef = number | string | { gid: number } | { plz: string };

/** Resolves postal codes to their areas (all areas of each code); 422 naming `field` for unknown codes. */
export async function resolvePlzList(ctx: AreaCtx, plzList: readonly string[], field: string): Promise<MemberArea[]> {
  const codes = [...new Set(plzList.map((p) => p.trim()))];
  const rows = codes.length
    ? await ctx.db
        .select({ gid: postalAreas.gid, plz: postalAreas.plz, geom: postalAreas.geom })
        .from(postalAreas)
        .where(inList(postalAreas.plz, codes))
    : [];
  const found = new Set(rows.map((r) => r.plz));
  const unknown = codes.filter((c) => !found.has(c));
  if (unknown.length) throw unprocessable(`Unknown postal codes in ${field}: ${unknown.join(", ")}`, field);
  return rows;
}

/** Resolves `plzareas` entries (gids, codes or objects); 422 naming `plzareas` for unknown ones. */
export async function resolveMemberRefs(ctx: AreaCtx, refs: readonly MemberRef[]): Promise<MemberArea[]> {
  const gids: number[] = [];
  const codes: string[] = [];
  for (const ref of refs) {
    if (typeof ref === "number") gids.push(ref);
    else if (typeof ref === "string") codes.push(ref);
    else if ("gid" in ref && typeof ref.gid === "number") gids.push(ref.gid);
    else codes.push((ref as { plz: string }).plz);
  }
  const byCode = codes.length ? await resolvePlzList(ctx, codes, "plzareas") : [];
  const uniqueGids = [...new Set(gids)];
  const byGid = uniqueGids.length
    ? await ctx.db
        .select({ gid: postalAreas.gid, plz: postalAreas.plz, geom: postalAreas.geom })
        .from(postalAreas)
        .where(inList(postalAreas.gid, uniqueGids))
    : [];
  const known = new Set(byGid.map((r) => r.gid));
  const unknown = uniqueGids.filter((g) => !known.has(g));
  if (unknown.length) throw unprocessable(`Unknown postal-code areas in plzareas: ${unknown.join(", ")}`, "plzareas");
  const all = new Map<number, MemberArea>();
  for (const r of [...byCode, ...byGid]) all.set(r.gid, r);
  return [...all.values()];
}

/** 409 when one of the areas already belongs to another tour area of the company. */
async function assertFree(ctx: AreaCtx, members: MemberArea[], field: string, except: number | null) {
  if (members.length === 0) return;
  const { results } = await ctx.d1
    .prepare(
      `SELECT m.tourarea_id AS area_id, p.plz AS plz FROM tour_area_members m JOIN postal_areas p ON p.gid = m.postal_area_gid
       WHERE m.company_id = ?1 AND m.postal_area_gid IN (SELECT value FROM json_each(?2)) AND m.tourarea_id <> ?3
       ORDER BY p.plz`,
    )
    .bind(ctx.companyId, jsonList(members.map((m) => m.gid)), except ?? 0)
    .all<{ area_id: number; plz: string }>();
  if (results.length) throw takenError(field, results);
}

const takenError = (field: string, taken: { area_id: number; plz: string }[]) =>
  conflict(`Postal codes already in another tour area: ${taken.map((t) => `${t.plz} (tour area ${t.area_id})`).join(", ")}`, field);

/**
 * Statement that fails the batch (NOT NULL violation) when one of `gids` is
 * taken by a tour area of the company other than `except`: the free-check,
 * repeated inside the transaction.
 */
const guardFree = (d1: D1Database, companyId: number, gids: number[], except: number | null) =>
  d1
    .prepare(
      `INSERT INTO tour_area_members (company_id, tourarea_id, postal_area_gid) SELECT NULL, NULL, NULL
       WHERE EXISTS (SELECT 1 FROM tour_area_members WHERE company_id = ?1 AND tourarea_id <> ?3 AND postal_area_gid IN (SELECT value FROM json_each(?2)))`,
    )
    .bind(companyId, jsonList(gids), except ?? 0);

const isGuardFailure = (err: unknown) => {
  for (let e: unknown = err; e instanceof Error; e = e.cause) if (/NOT NULL constraint failed: tour_area_members/.test(e.message)) return true;
  return false;
};

async function runGuarded<T>(field: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (isGuardFailure(err)) throw conflict("Postal codes were taken by another tour area concurrently; retry", field);
    throw err;
  }
}

const unionOf = (members: MemberArea[]): MultiPolygon => unionPostalAreas(members.map((m) => m.geom));

// ---------------------------------------------------------------- tour areas: writing

/** `POST /areafromplz`: the tour area made of the given postal codes, with membership, in one batch. */
export async function createTourAreaFromPlz(ctx: AreaCtx, input: { plz_list: string[]; areaname: string }): Promise<TourArea> {
  const members = await resolvePlzList(ctx, input.plz_list, "plz_list");
  await assertFree(ctx, members, "plz_list", null);
  const geom = unionOf(members);
  const gids = members.map((m) => m.gid);
  const { d1, companyId } = ctx;
  const results = await runGuarded("plz_list", () =>
    d1.batch([
      guardFree(d1, companyId, gids, null),
      d1.prepare("INSERT INTO tour_areas (company_id, areaname, geom) VALUES (?1, ?2, ?3) RETURNING id").bind(companyId, input.areaname, JSON.stringify(geom)),
      d1
        .prepare(
          `INSERT INTO tour_area_members (company_id, tourarea_id, postal_area_gid)
           SELECT ?1, (SELECT max(id) FROM tour_areas WHERE company_id = ?1), value FROM json_each(?2)`,
        )
        .bind(companyId, jsonList(gids)),
    ]),
  );
  const id = (results[1].results[0] as { id: number }).id;
  return getTourArea(ctx, id);
}

/** `PATCH /tourarea/{id}`: what changes. */
export interface TourAreaPatch {
  /** Must equal the id in the path. */
  id?: number;
  areaname?: string;
  /** A driver of the company; null unbinds. */
  driver_id?: number | null;
  /** New membership as postal codes. */
  plz_list?: string[];
  /** New membership as gids, codes or objects, or a list envelope of such. */
  plzareas?: MemberRef[] | { objects: MemberRef[] };
  /** Sets the geometry directly (stored as MultiPolygon). */
  geom?: AreaGeometry;
}

/** `PATCH /tourarea/{id}`: name, driver binding, membership (recomputing geom) and/or geom, in one batch. */
export async function updateTourArea(ctx: AreaCtx, id: number, patch: TourAreaPatch): Promise<TourArea> {
  const current = await tourAreaRow(ctx, id);
  if (patch.id !== undefined && patch.id !== id) throw unprocessable("id in the body differs from the path", "id");
  if (patch.plz_list !== undefined && patch.plzareas !== undefined) throw unprocessable("Give either plz_list or plzareas, not both", "plz_list,plzareas");

  if (patch.driver_id !== undefined && patch.driver_id !== null) {
    const [driver] = await ctx.db
      .select({ id: users.id })
      .from(users)
      .where(and(eq(users.id, patch.driver_id), eq(users.company_id, ctx.companyId), eq(users.usertype, "driver")));
    if (!driver) throw unprocessable(`driver_id ${patch.driver_id} is not a driver of this company`, "driver_id");
  }

  let members: MemberArea[] | undefined;
  let field = "plzareas";
  if (patch.plz_list !== undefined) {
    field = "plz_list";
    members = await resolvePlzList(ctx, patch.plz_list, field);
  } else if (patch.plzareas !== undefined) {
    members = await resolveMemberRefs(ctx, Array.isArray(patch.plzareas) ? patch.plzareas : patch.plzareas.objects);
  }
  if (members) await assertFree(ctx, members, field, id);

  let geom: MultiPolygon | undefined;
  if (patch.geom !== undefined) {
    const checked = validateAreaGeometry(patch.geom);
    if (!checked.ok) throw unprocessable(`geom: ${checked.message}`, "geom");
    geom = asMultiPolygon(checked.geom);
  } else if (members) geom = unionOf(members);

  const { d1, companyId } = ctx;
  const statements: D1PreparedStatement[] = [];
  const gids = members?.map((m) => m.gid) ?? [];
  if (members) statements.push(guardFree(d1, companyId, gids, id));
  statements.push(
    d1
      .prepare("UPDATE tour_areas SET areaname = ?3, driver_id = ?4, geom = ?5 WHERE id = ?1 AND company_id = ?2")
      .bind(
        id,
        companyId,
        patch.areaname ?? current.areaname,
        patch.driver_id === undefined ? current.driver_id : patch.driver_id,
        JSON.stringify(geom ?? current.geom ?? { type: "MultiPolygon", coordinates: [] }),
      ),
  );
  if (members) {
    statements.push(d1.prepare("DELETE FROM tour_area_members WHERE tourarea_id = ?1 AND company_id = ?2").bind(id, companyId));
    statements.push(
      d1
        .prepare("INSERT INTO tour_area_members (company_id, tourarea_id, postal_area_gid) SELECT ?1, ?2, value FROM json_each(?3)")
        .bind(companyId, id, jsonList(gids)),
    );
  }
  await runGuarded(field, () => d1.batch(statements));
  return getTourArea(ctx, id);
}

/** `DELETE /deletetourarea/{id}`: removes the tour area and its membership; answers the deleted object. */
export async function deleteTourArea(ctx: AreaCtx, id: number): Promise<TourArea> {
  const area = await getTourArea(ctx, id);
  await ctx.d1.batch([
    ctx.d1.prepare("DELETE FROM tour_area_members WHERE tourarea_id = ?1 AND company_id = ?2").bind(id, ctx.companyId),
    ctx.d1.prepare("DELETE FROM tour_areas WHERE id = ?1 AND company_id = ?2").bind(id, ctx.companyId),
  ]);
  return area;
}

/** Postal-code areas per page at most: their polygons are large. */
export const PLZAREA_MAX_PER_PAGE = 10;

/** A page of the postal-code areas (reference data, every company sees them all) with this company's `area_id`. */
export const listPlzAreas = (ctx: AreaCtx, params: ListParams) =>
  listObjects(
    ctx.db,
    {
      table: postalAreas,
      scope: undefined,
      fields: plzAreaFields(ctx.companyId),
      idColumn: postalAreas.gid,
      maxPerPage: PLZAREA_MAX_PER_PAGE,
      present: (rows: (typeof postalAreas.$inferSelect)[]) => presentPlzAreas(ctx, rows),
    },
    params,
  );

/** A page of the company's tour areas. */
export const listTourAreas = (ctx: AreaCtx, params: ListParams) =>
  listObjects(
    ctx.db,
    { table: tourAreas, scope: eq(tourAreas.company_id, ctx.companyId), fields: tourAreaFields(), idColumn: tourAreas.id, present: (rows: (typeof tourAreas.$inferSelect)[]) => presentTourAreas(ctx, rows) },
    params,
  );

/** The postal-code area containing a point, with the company's tour area of it (`success: false` outside every area). */
export async function postalAreaAt(ctx: AreaCtx, lon: number, lat: number) {
  const area = await findPostalAreaForPoint(ctx.d1, lon, lat);
  if (!area) return { success: false, plzarea_id: null, plz: null, geom: null, area_id: null };
  const areaOf = await tourAreaIdsOf(ctx, [area.gid]);
  return { success: true, plzarea_id: area.gid, plz: area.plz, geom: area.geom, area_id: areaOf.get(area.gid) ?? null };
}
