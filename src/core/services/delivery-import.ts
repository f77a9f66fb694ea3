/**
 * Creating many deliveries at once with their addresses: `deliverydata` of a
 * routing request and spreadsheet uploads. Addresses are geocoded when they
 * carry no coordinate; all rows are written in two statements of one batch.
 */
import { sql } from "drizzle-orm";
import type { Company } from "../context";
import { addresses, deliveries } from "../db/schema";
import { d1Statement, inList } from "../db/sql";
import type { Env } from "../env";
import { ApiError, conflict, unprocessable } from "../errors";
import { normaliseDateTime } from "../lib/time";
import { type DateTimeWindow, checkTimeWindows } from "../domain/time-windows";
import { type AddressInputType, resolveAddressInput } from "./address-input";
import { onTheWay } from "./deliveries";

export type DeliveryDataItem = AddressInputType & {
  custom_id?: string | null;
  /** The sending system's id of the order: a row with one of the company's changes that delivery (uploads). */
  external_id?: string | null;
  custom_tour?: string | null;
  pdt_from?: string | null;
  pdt_to?: string | null;
  time_windows?: DateTimeWindow[];
  els?: number | null;
  load?: number | null;
  load_2?: number | null;
  load_3?: number | null;
  required_skills?: string[];
  notes?: string | null;
  scancode?: string | null;
  final?: boolean | null;
  pickup_ref_id?: number | null;
  notify_customer_email?: boolean | null;
  notify_customer_sms?: boolean | null;
  deliverytype_id?: number | null;
};

/** A row that could not be imported: its index in the input, why, and the fields concerned. */
export interface VagueAddress {
  index: number;
  message: string;
  fields: string;
}

/** An item written: created, or changed by its `external_id`. */
export interface ImportedItem {
  index: number;
  id: number;
  created: boolean;
}

/**
 * Imports the items. `fail`: the first unusable item is an ApiError naming its
 * fields (`<field>.<index>.<name>`) and nothing is stored (routing requests,
 * bulk intake). `collect`: unusable items are skipped and reported (uploads,
 * bulk intake with `partial`). `results` name each written item's delivery,
 * by index; `alsoInBatch` goes into the D1 batch (the transaction) of the writes.
 *
 * An item with an `external_id` the company has already changes that delivery
 * (an upsert: its fields and its new address), unless it is on a route on the
 * way: such an item is unusable. `updated` counts the changed ones.
 */
export async function importDeliveries(
  env: Env,
  company: Company,
  depotId: number,
  items: DeliveryDataItem[],
  onProblem: "fail" | "collect",
  field = "deliverydata",
  alsoInBatch: D1PreparedStatement[] = [],
): Promise<{ ids: number[]; results: ImportedItem[]; vague: VagueAddress[]; updated: number }> {
  const vague: VagueAddress[] = [];
  const refuse = (index: number, err: ApiError) => {
    if (onProblem === "fail") throw err;
    vague.push({ index, message: err.message, fields: err.fields });
  };
  let resolved = [];
  for (const [i, item] of items.entries()) {
    try {
      resolved.push({ ...(await resolveItem(env, company, item, `${field}.${i}.`)), index: i });
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      refuse(i, err);
    }
  }
  // The orders named by external id: which the company has, and which are on a route on the way (those cannot change).
  const externalIds = [...new Set(resolved.flatMap((r) => (r.delivery.external_id ? [r.delivery.external_id] : [])))];
  const known = externalIds.length
    ? ((await d1Statement(env.DB, sql`select ${deliveries.external_id} as external_id, ${onTheWay} as driving from ${deliveries} where ${deliveries.company_id} = ${company.id} and ${inList(deliveries.external_id, externalIds)}`).all<{ external_id: string; driving: number }>()).results)
    : [];
  const existing = new Set(known.map((k) => k.external_id));
  const driving = new Set(known.filter((k) => k.driving).map((k) => k.external_id));
  const onTheWayRefusal = (key: string, index: number) => conflict(`The delivery with external_id ${key} is on a route that is on the way: not changed`, `${field}.${index}.external_id`);
  resolved = resolved.filter((r) => {
    const key = r.delivery.external_id;
    if (!key || !driving.has(key)) return true;
    refuse(r.index, onTheWayRefusal(key, r.index));
    return false;
  });
  if (!resolved.length) return { ids: [], results: [], vague, updated: 0 };
  // Rows travel as JSON parameters (D1 binds at most 100 values per statement). One INSERT … SELECT
  // numbers its rows consecutively, so delivery k refers to the k-th new address.
  const addressColumns = ["contactcompany", "customernr", "contactfirstname", "contactlastname", "street", "housenumber", "postalcode", "city", "district", "country", "email", "phonenr", "addresstype", "lng", "lat", "geocode_source"] as const;
  const deliveryColumns = ["custom_id", "external_id", "custom_tour", "pdt_from", "pdt_to", "time_windows", "els", "load", "load_2", "load_3", "required_skills", "notes", "scancode", "final", "deliverytype_id", "notify_customer", "notify_customer_email", "notify_customer_sms"] as const;
  const pick = (row: Record<string, unknown>, columns: readonly string[]) => columns.map((c) => row[c] ?? null);
  const fields = (columns: readonly string[]) => sql.raw(columns.map((_, k) => `json_extract(value, '$[${k}]')`).join(", "));
  const names = (columns: readonly string[]) => sql.raw(columns.map((c) => `"${c}"`).join(", "));
  const addressRows = JSON.stringify(resolved.map((r) => pick(r.location as unknown as Record<string, unknown>, addressColumns)));
  const deliveryRows = JSON.stringify(resolved.map((r) => pick(r.delivery, deliveryColumns)));
  const n = resolved.length;
  // SQLite parses `INSERT … SELECT … ON CONFLICT` only with a WHERE in the SELECT.
  const upsert = sql.raw(
    `where true order by key on conflict ("company_id", "external_id") do update set ` +
      ["supplierlocation_id", "deliverylocation_id", ...deliveryColumns].map((c) => `"${c}" = excluded."${c}"`).join(", "),
  );
  const [newAddresses, written] = await env.DB.batch([
    d1Statement(env.DB, sql`insert into ${addresses} ("company_id", ${names(addressColumns)}) select ${company.id}, ${fields(addressColumns)} from json_each(${addressRows}) order by key returning id`),
    d1Statement(
      env.DB,
      sql`insert into ${deliveries} ("company_id", "supplierlocation_id", "deliverylocation_id", ${names(deliveryColumns)})
          select ${company.id}, ${depotId}, (select max(id) from ${addresses} where company_id = ${company.id}) - (${n} - 1 - key), ${fields(deliveryColumns)}
          from json_each(${deliveryRows}) ${upsert} where not ${onTheWay} returning id, deliverylocation_id`,
    ),
    ...alsoInBatch,
  ]);
  // The k-th new address (ids ascend in insertion order) is item k's: each written delivery names its item by its address.
  const addressIds = (newAddresses.results as { id: number }[]).map((a) => a.id).sort((a, b) => a - b);
  const itemOf = new Map(addressIds.map((id, k) => [id, resolved[k]]));
  const results: ImportedItem[] = (written.results as { id: number; deliverylocation_id: number }[]).map((row) => {
    const item = itemOf.get(row.deliverylocation_id)!;
    return { index: item.index, id: row.id, created: !(item.delivery.external_id && existing.has(item.delivery.external_id)) };
  });
  results.sort((a, b) => a.index - b.index);
  // Put on a route on the way between the look and the write: the statement left it unchanged.
  const done = new Set(results.map((r) => r.index));
  for (const r of resolved) if (!done.has(r.index)) vague.push({ index: r.index, message: onTheWayRefusal(r.delivery.external_id ?? "", r.index).message, fields: `${field}.${r.index}.external_id` });
  return { ids: [...new Set(results.map((r) => r.id))].sort((a, b) => a - b), results, vague, updated: results.filter((r) => !r.created).length };
}

async function resolveItem(env: Env, company: Company, item: DeliveryDataItem, prefix: string) {
  const { custom_id, external_id, custom_tour, pdt_from, pdt_to, time_windows, els, load, load_2, load_3, required_skills, notes, scancode, final, pickup_ref_id: _pickup, notify_customer_email, notify_customer_sms, deliverytype_id, ...address } = item;
  const location = await resolveAddressInput(env, company.id, address, prefix);
  const window = [pdt_from, pdt_to].map((t, k) => {
    if (!t) return null;
    const normalised = normaliseDateTime(t);
    if (!normalised) throw unprocessable("Date-times must be ISO 8601", `${prefix}${k ? "pdt_to" : "pdt_from"}`);
    return normalised;
  });
  if (window[0] && window[1] && window[0] > window[1]) throw unprocessable("pdt_from must not be after pdt_to", `${prefix}pdt_from,${prefix}pdt_to`);
  const checked = checkTimeWindows(time_windows ?? [], { from: window[0], to: window[1] });
  if ("problem" in checked) throw unprocessable(checked.problem, `${prefix}time_windows`);
  return {
    location,
    delivery: {
      custom_id,
      external_id: external_id?.trim() || null,
      custom_tour,
      pdt_from: checked.from,
      pdt_to: checked.to,
      time_windows: JSON.stringify(checked.windows),
      els,
      load,
      load_2,
      load_3,
      // JSON text: the column is JSON, and json_each would otherwise hand SQLite an array.
      required_skills: JSON.stringify(required_skills ?? []),
      notes,
      scancode: scancode?.trim() || null,
      final: final === null || final === undefined ? null : Number(final),
      deliverytype_id,
      notify_customer: Number(!!(notify_customer_email || notify_customer_sms)),
      // Asked for one channel: only that one.
      notify_customer_email: notify_customer_email || notify_customer_sms ? Number(!!notify_customer_email) : null,
      notify_customer_sms: notify_customer_email || notify_customer_sms ? Number(!!notify_customer_sms) : null,
    },
  };
}
