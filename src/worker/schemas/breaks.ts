/** Breaks on the wire: working-time rules and fixed breaks of companies, vehicles and drivers, and the breaks of a planned route. */
import { z } from "@hono/zod-openapi";
import { WORKING_TIME_RULES } from "../../shared/contract/breaks";
import { normaliseTimeOfDay } from "../../core/lib/time";
import { DateTime } from "../openapi";

/** At most this many fixed breaks on one vehicle or driver. */
const MAX_FIXED_BREAKS = 6;

/** What the rules ask, for every field that selects them. */
export const RULES_TEXT =
  "`de-arbzg`: German Arbeitszeitgesetz §3/§4, 30 minutes after at most 6 hours of work, 45 in all beyond 9 hours, blocks of at least 15 minutes, at most 10 hours of work; " +
  "`eu-561`: Regulation (EC) 561/2006 art. 6/7, 45 minutes after at most 4.5 hours of driving (or 15 then 30), at most 9 hours of driving.";

export const WorkingTimeRules = z
  .array(z.enum(WORKING_TIME_RULES))
  .max(10)
  .transform((rules) => [...new Set(rules)])
  .openapi({
    type: "array",
    maxItems: 10,
    items: { type: "string", enum: [...WORKING_TIME_RULES] },
    example: ["de-arbzg"],
    description: `Working-time rules the tours keep; the plan places the breaks they require (beyond the interface). ${RULES_TEXT}`,
  });

const BreakTime = z
  .string()
  .max(20)
  .transform((v, ctx) => {
    const stored = normaliseTimeOfDay(v);
    if (stored === null) {
      ctx.addIssue({ code: "custom", message: "a time of day hh:mm, hh:mm:ss or hh:mm:ss+hh:mm" });
      return z.NEVER;
    }
    return stored;
  })
  .openapi({ type: "string", maxLength: 20, example: "12:00:00", description: "Time of day `hh:mm:ss+hh:mm`, or `hh:mm[:ss]` on the company's wall clock; answered as stored" });

const BreakSpecShape = {
  from: BreakTime.openapi({ description: "The break starts at the earliest then (time of day)" }),
  to: BreakTime.openapi({ description: "and at the latest then (a time before `from`: the next morning)" }),
  minutes: z.number().int().min(5).max(8 * 60).openapi({ description: "How long it lasts" }),
};

export const FixedBreaksInput = z
  .array(z.object(BreakSpecShape))
  .max(MAX_FIXED_BREAKS)
  .openapi({ description: `Breaks at given times of day (at most ${MAX_FIXED_BREAKS}): each starts between \`from\` and \`to\` and lasts \`minutes\`; one whose window the tour never reaches is not taken (beyond the interface)` });

export const BreakSpecSchema = z
  .object({ from: z.string(), to: z.string(), minutes: z.number().int() })
  .openapi("BreakSpec", { description: "A break at a given time of day: it starts between `from` and `to` (times of day as stored) and lasts `minutes`" });

export const WorkingTimeRulesOutput = z.array(z.enum(WORKING_TIME_RULES)).openapi({ example: ["de-arbzg"] });

export const RouteBreakSchema = z
  .object({
    start: DateTime,
    end: DateTime,
    minutes: z.number().int(),
    after_orderindex: z.number().int().openapi({ description: "The break lies after the stop of this `orderindex` (0: before the first stop)" }),
    where: z.enum(["after-service", "before-service", "on-the-way"]).openapi({
      description: "At the stop of `after_orderindex` once its service ends (at the depot before the first stop), at the next stop before its service (while waiting for its window where there is waiting), or on the way between",
    }),
    reason: z.enum(["fixed", ...WORKING_TIME_RULES]).openapi({ description: "A fixed break of the vehicle or driver, or the working-time rule that requires it" }),
  })
  .openapi("RouteBreak", { description: "A break the plan placed; its minutes count in `gross_duration`, not in `net_duration`, and in the planned times of the stops after it" });
