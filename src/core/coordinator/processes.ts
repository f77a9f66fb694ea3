/**
 * Routing and upload processes as the company's coordinator keeps them and
 * the interface shows them (contract.md §6): four actions, each with a status,
 * a link, vague addresses and meta.
 */

/** The four actions of a routing or upload process (contract.md §6). */
export const PROCESS_ACTIONS = ["import_deliveries", "cluster_deliveries", "routing", "final"] as const;
export type ProcessAction = (typeof PROCESS_ACTIONS)[number];
export type ProcessStatus = "waiting" | "running" | "finished" | "failed" | "skipped";

export interface ProcessRecord {
  status: ProcessStatus;
  link: string;
  vague_addresses: Record<string, string | number | null>[];
  /** JSON text with at least `progress` (0..1), and `error` when failed. */
  meta: string;
}

export type ProcessState = Record<ProcessAction, ProcessRecord>;

export type ProcessUpdate = { status?: ProcessStatus; link?: string; meta?: Record<string, unknown>; vague_addresses?: ProcessRecord["vague_addresses"] };

/** The `error` of a cancelled process (contract.md §6 has no `cancelled` status: it is `failed` with this reason). */
export const CANCELLED = "cancelled";

export const isFinal = (status: ProcessStatus) => status === "finished" || status === "failed";

/** A fresh action record: progress 1 when it is already done or skipped, 0 otherwise. */
export const processRecord = (status: ProcessStatus, extra: Partial<ProcessRecord> = {}): ProcessRecord => ({
  status,
  link: "",
  vague_addresses: [],
  meta: JSON.stringify({ progress: status === "finished" || status === "skipped" ? 1 : 0 }),
  ...extra,
});
