/** The company on the wire: the settings the operator sets, and what the company holds. */
import { z } from "@hono/zod-openapi";
import { LANGUAGES } from "../../core/services/company-settings";
import { DELIVERY_TYPES } from "../../core/domain/states";
import { RULES_TEXT, WorkingTimeRules } from "./breaks";
import { ARCHIVE_LIST_PAGES, BYTES_PER_ROW, type GrowingTable } from "../../core/services/usage";

export const UsageSchema = z
  .object({
    slug: z.string(),
    tables: z.array(
      z.object({
        table: z.enum(Object.keys(BYTES_PER_ROW) as [GrowingTable, ...GrowingTable[]]),
        rows: z.number().int(),
        bytes_per_row: z.number().int().openapi({ description: "Measured with the table's indexes (docs/benchmarks.md, capacity table)" }),
        estimated_bytes: z.number().int(),
      }),
    ),
    estimated_bytes: z.number().int().openapi({ description: "Sum over the tables: rows x measured bytes per row, an estimate (D1 does not report storage per company)" }),
    proofs: z
      .object({
        records: z.number().int().openapi({ description: "Proofs of delivery in D1 (`delivery_proofs`)" }),
        image_bytes: z.number().int().openapi({ description: "Their photos and signatures in R2 (`proofs/<company_id>/`), as stored" }),
      })
      .openapi({ description: "Kept until the company's `proof_retention_days` (retention run)" }),
    archive: z.object({
      driver_days: z.number().int().openapi({ description: "Archived driver-days of positions in R2 (`positions/<company_id>/`)" }),
      bytes: z.number().int().openapi({ description: "Their size in R2 (gzip)" }),
      complete: z.boolean().openapi({ description: `false: the count stopped after ${ARCHIVE_LIST_PAGES * 1000} objects (bounded listing), so the figures are a lower bound` }),
    }),
  })
  .openapi("CompanyUsage");

const isTimeZone = (tz: string) => {
  try {
    new Intl.DateTimeFormat("en", { timeZone: tz });
    return true;
  } catch {
    return false;
  }
};

/** The settings the operator sets (and GET /company shows). */
export const CompanySettings = z.object({
  timezone: z.string().max(64).refine(isTimeZone, "an IANA time zone such as Europe/Berlin").openapi({ example: "Europe/Berlin", description: "Every time a person reads (messages, pages) is in this zone; the traffic profile follows its wall clock." }),
  language: z.enum(LANGUAGES).openapi({ description: "Language of messages to drivers, dispatchers and customers (default de)." }),
  eta_update_minutes: z.number().int().min(1).max(24 * 60).openapi({ description: "A customer who was told an ETA hears again when it moves by more than this (default 15)." }),
  notify_stops_before: z.number().int().min(0).max(10).openapi({ description: "A customer hears that the driver is close when this many stops lie before theirs (default 1; 0: never)." }),
  position_retention_days: z
    .number()
    .int()
    .min(1)
    .max(3650)
    .openapi({ description: "Driver positions older than this many days (whole days on the company's wall clock) move from the database to the archive, one file per driver and day; `GET /drivertrace/<id>?date=` answers the same for them (default 30)." }),
  proof_retention_days: z
    .number()
    .int()
    .min(1)
    .max(3650)
    .openapi({ description: "Proofs of delivery (photo, signature, recipient, where the report was made) are deleted this many days after they were made, by the daily retention run (default 90; GDPR art. 5(1)(e): kept no longer than needed)." }),
  proof_on_tracking_page: z.boolean().openapi({ description: "The customer's tracking page shows the proof's photo and signature through links signed for 15 minutes (default false: only the time and the driver's note)." }),
  service_minutes_by_type: z
    .partialRecord(
      z.enum(DELIVERY_TYPES.map((t) => String(t.id)) as [string, ...string[]]),
      z.number().int().min(0).max(24 * 60),
    )
    .openapi({
      example: { "1": 4, "2": 10 },
      description: "Service minutes of a delivery without `els`, by `deliverytype_id` (keys from GET /deliverytype); a type not listed: 0 (default {}). A delivery's own `els` wins.",
    }),
  working_time_rules: WorkingTimeRules.openapi({ description: `Working-time rules of every vehicle that names none of its own (default []: none); the plan places the breaks they require (docs/features/fleet-and-opening-hours.md). ${RULES_TEXT}` }),
});
