/** A route or delivery state change as the company's coordinator receives it over RPC (contract.md §5), and its outcome. */
import type { AuthUser, Company } from "../context";
import type { ErrorStatus } from "../errors";
import type { PublishedEvent } from "./live";

/** PATCH /route, POST /setroutestatus: the fields that change. */
export interface RouteChange {
  status?: number;
  driver_id?: number | null;
}

/** What a delivery report may carry besides its outcome (proof of delivery). */
export interface ReportExtras {
  reported_at?: string;
  position?: { lat: number; lng: number; accuracy?: number };
  recipient?: string;
  scancode?: string;
}

/** A state change as the company's Durable Object receives it over RPC. */
export type LifecycleOp =
  | { kind: "route"; company: Company; actor: AuthUser; routeId: number; change: RouteChange; base: string }
  | { kind: "cancel"; company: Company; routeId: number }
  | { kind: "report"; company: Company; actor: AuthUser; deliveryId: number; outcome: "delivered" | "undelivered"; drivernotes?: string; base: string; extras?: ReportExtras };

/** Errors cross RPC as plain data, so the worker can answer with the right status. */
export type LifecycleOutcome = { ok: true; events: PublishedEvent[] } | { ok: false; status: ErrorStatus; message: string; fields: string };
