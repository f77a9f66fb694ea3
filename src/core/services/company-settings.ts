/** How a company talks to people: time zone, language and the customer notification rules. */
import { z } from "@hono/zod-openapi";

export const LANGUAGES = ["de", "en"] as const;
export type Language = (typeof LANGUAGES)[number];

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
});
