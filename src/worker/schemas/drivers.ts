/** Drivers on the wire: the record, its status values and colour. */
import { z } from "@hono/zod-openapi";
import { DRIVER_STATUSES, DRIVER_STATUS_DESCRIPTION } from "../../core/services/drivers";
import { DateTime } from "../openapi";
import { AvailabilitySchema } from "./availability";
import { PositionRecordSchema } from "./tracking";
import { UserSchema } from "./users";
import { SkillsOutput } from "./skills";
import { BreakSpecSchema, WorkingTimeRulesOutput } from "./breaks";

export const DriverStatusValue = z
  .number()
  .int()
  .refine((v) => DRIVER_STATUSES.some((s) => s.id === v), { message: "unknown driver status (see GET /driverstatus)" })
  .openapi({ type: "integer", description: DRIVER_STATUS_DESCRIPTION });

export const HtmlColor = z
  .string()
  .max(20)
  .trim()
  .transform((v) => v.replace(/^#/, "").toLowerCase())
  .pipe(z.string().regex(/^[0-9a-f]{6}$/, "six hex digits, e.g. 3a7bd5"))
  .openapi({ type: "string", maxLength: 20, example: "3a7bd5", description: "Six hex digits, without '#'" });

/** The `current_position` of a driver: its newest tracking entry. */
const CurrentPosition = z
  .object({
    id: z.number().int(),
    driver_id: z.number().int(),
    timestamp: DateTime,
    position: PositionRecordSchema.shape.position,
    firstname: z.string().nullable().optional(),
    lastname: z.string().nullable().optional(),
    htmlcolor: z.string().nullable().optional(),
  })
  .openapi("DriverCurrentPosition");

export const DriverSchema = UserSchema
  .extend({
    usertype: z.literal("driver"),
    mobilenr: z.string().nullable(),
    htmlcolor: z.string().nullable(),
    vehicle: z.string().nullable(),
    status: z.number().int(),
    skills: SkillsOutput.openapi({ description: "What the driver can do (beyond the interface)" }),
    working_time_rules: WorkingTimeRulesOutput.nullable().openapi({ description: "The driver's own working-time rules, replacing the vehicle's when bound to it; null: the vehicle's (beyond the interface)" }),
    breaks: z.array(BreakSpecSchema).nullable().openapi({ description: "The driver's own breaks at given times of day, replacing the vehicle's when bound to it; null: the vehicle's (beyond the interface)" }),
    driveravailabilities: z.array(AvailabilitySchema).openapi({ description: "Availability windows that have not ended yet, by `fromtime`" }),
    available: z.boolean().optional().openapi({ description: "With `includeavail`: an availability window covers now (computed)" }),
    current_position: CurrentPosition.nullable().optional().openapi({ description: "With `includeposition` (or `driverinfo`): the newest tracking entry" }),
  })
  .openapi("Driver");
