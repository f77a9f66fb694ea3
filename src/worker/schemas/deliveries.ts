/** Deliveries on the wire: the record and the fields a client may write. */
import { z } from "@hono/zod-openapi";
import { DateTime, Point } from "../openapi";
import { MAX_TIME_WINDOWS } from "../../core/domain/time-windows";
import { AddressInput, AddressSchema, ExternalId } from "./addresses";
import { SkillsInput, SkillsOutput } from "./skills";

const dt = DateTime.nullable();

/** Several windows of one delivery (opening hours), inside pdt_from..pdt_to. */
export const TimeWindowsInput = z
  .array(z.object({ from: z.string().max(40).openapi({ format: "date-time" }), to: z.string().max(40).openapi({ format: "date-time" }) }))
  .max(MAX_TIME_WINDOWS)
  .openapi({
    description:
      `Several time windows (e.g. opening hours 08:00-12:00 and 14:00-18:00), at most ${MAX_TIME_WINDOWS}, not overlapping, inside pdt_from..pdt_to ` +
      "(which, when not given, become the first window's start and the last one's end); the optimiser chooses the window (`window_from`/`window_to`). [] = the one window pdt_from..pdt_to. Beyond the interface.",
  });
const int = z.number().int().nullable();
const str = z.string().nullable();

export const DeliverySchema = z
  .object({
    id: z.number().int(),
    deliveryissuename: str,
    pdt_from: dt, pdt_to: dt,
    time_windows: z.array(z.object({ from: DateTime, to: DateTime })).openapi({ description: "Several windows inside pdt_from..pdt_to, sorted ([]: that one window; beyond the interface)" }),
    window_from: dt.openapi({ description: "The window of `time_windows` the plan serves it in; ETAs, lateness and the day report use it (null: pdt_from..pdt_to)" }),
    window_to: dt,
    eta_from: dt, eta_to: dt, tdt_from: dt, tdt_to: dt, ddt_from: dt, ddt_to: dt, ata: dt, atd: dt,
    els: int.openapi({ description: "Estimated length of stay, minutes" }),
    als: z.number().nullable(),
    tfp: int.openapi({ description: "Driving time from the preceding stop, seconds" }),
    creationtime: z.string(),
    deliverprio: int, orderindex: int, load: int,
    load_2: int.openapi({ description: "Load of the second kind (e.g. volume), against the vehicle's `capacity_2` (beyond the interface)" }),
    load_3: int.openapi({ description: "Load of the third kind (e.g. pallets), against the vehicle's `capacity_3` (beyond the interface)" }),
    required_skills: SkillsOutput.openapi({ description: "Skills the vehicle or its driver must have to serve it (beyond the interface; docs/features/fleet-and-opening-hours.md)" }),
    notes: str, custom_id: str, custom_tour: str, drivernotes: str,
    external_id: str.openapi({ description: "The sending system's own id of the order, unique within the company; `PUT /delivery/by-external-id/{external_id}` creates or changes the delivery by it (beyond the interface)" }),
    final: z.boolean().nullable(),
    vehicle: str, scancode: str,
    notify_customer: z.boolean(),
    notify_customer_email: z.boolean().nullable().openapi({ description: "With notify_customer: email the customer (null: by every channel the address has)" }),
    notify_customer_sms: z.boolean().nullable().openapi({ description: "With notify_customer: text the customer (null: by every channel the address has)" }),
    deliverylocation_id: int, supplierlocation_id: int,
    address: AddressSchema.nullable().openapi({ description: "The delivery location record" }),
    delivery_address: Point.nullable(),
    supplier_address: Point.nullable(),
    route_id: int,
    status: z.number().int().openapi({ description: "See GET /deliverystatus" }),
    code: int, distances: str, deliverytype_id: int,
    waiting_time: int.openapi({ description: "Seconds the vehicle waits before the window opens" }),
    pickup_ref_id: int,
  })
  .openapi("Delivery");

/** Fields a client may write; schedule and state fields are set by routing and reporting. */
export const DeliveryWritable = z.object({
  deliveryissuename: z.string().max(200).nullable().optional(),
  pdt_from: z.string().max(40).nullable().optional().openapi({ format: "date-time", description: "ISO 8601; without a zone designator UTC" }),
  pdt_to: z.string().max(40).nullable().optional().openapi({ format: "date-time" }),
  time_windows: TimeWindowsInput.optional(),
  ddt_from: z.string().max(40).nullable().optional().openapi({ format: "date-time" }),
  ddt_to: z.string().max(40).nullable().optional().openapi({ format: "date-time" }),
  els: z.number().int().min(0).max(24 * 60).nullable().optional(),
  deliverprio: z.number().int().nullable().optional(),
  load: z.number().int().min(0).nullable().optional(),
  load_2: z.number().int().min(0).nullable().optional(),
  load_3: z.number().int().min(0).nullable().optional(),
  required_skills: SkillsInput.optional(),
  notes: z.string().max(2000).nullable().optional(),
  custom_id: z.string().max(100).nullable().optional(),
  external_id: ExternalId.nullable().optional().openapi({ description: "The sending system's own id of the order, unique within the company (409 when another delivery has it)" }),
  custom_tour: z.string().max(100).nullable().optional(),
  final: z.boolean().nullable().optional(),
  vehicle: z.string().max(50).nullable().optional(),
  scancode: z.string().max(200).nullable().optional(),
  notify_customer: z.boolean().optional(),
  notify_customer_email: z.boolean().nullable().optional(),
  notify_customer_sms: z.boolean().nullable().optional(),
  deliverylocation_id: z.number().int().positive().optional(),
  supplierlocation_id: z.number().int().positive().optional(),
  deliverytype_id: z.number().int().nullable().optional(),
  code: z.number().int().nullable().optional(),
  pickup_ref_id: z.number().int().positive().nullable().optional(),
});

/** A delivery with its address, to create: routing's `deliverydata` items and bulk intake's (with an `external_id`). */
export const DeliveryData = AddressInput.extend({
  custom_id: z.string().max(100).nullable().optional(),
  pdt_from: z.string().max(40).nullable().optional(),
  pdt_to: z.string().max(40).nullable().optional(),
  time_windows: DeliveryWritable.shape.time_windows,
  els: z.number().int().min(0).max(1440).nullable().optional(),
  load: z.number().int().min(0).nullable().optional(),
  load_2: DeliveryWritable.shape.load_2,
  load_3: DeliveryWritable.shape.load_3,
  required_skills: DeliveryWritable.shape.required_skills,
  notes: z.string().max(2000).nullable().optional(),
  scancode: z.string().max(200).nullable().optional().openapi({ description: "The parcel's barcode or QR code (Delivery `scancode`), which the driver app checks at the door" }),
  final: z.boolean().nullable().optional(),
  pickup_ref_id: z.number().int().nullable().optional(),
  notify_customer_email: z.boolean().nullable().optional(),
  notify_customer_sms: z.boolean().nullable().optional(),
  deliverytype_id: z.number().int().nullable().optional(),
});
