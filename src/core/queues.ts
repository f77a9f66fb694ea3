/** The bodies of the Queues' messages (wrangler.toml): routing, notifications, webhook runs. */

export interface RoutingJob {
  processId: string;
  companyId: number;
  /** `upload`: a one-step upload to import before routing; `bulk`: a bulk intake to geocode and write (services/bulk-intake.ts). */
  kind?: "upload" | "bulk";
  /** Absolute base of the company's API (`<origin>/<slug>/api`) for the links the job hands out. */
  apiBase: string;
}

/** One part of a big plan to improve (services/routing/fan-out.ts); `key`: the part's object in `UPLOADS`. */
export interface RoutingPartJob {
  kind: "routing-part";
  processId: string;
  companyId: number;
  /** The claim of the run that split the plan: results of an older run are ignored. */
  attempt: string;
  partId: number;
  key: string;
  /** Search time of the part, ms. */
  budgetMs: number;
}

/** The parts of a big plan are in (or their deadline passed): merge them and write the routes, under the claim `attempt`. */
export interface RoutingMergeJob {
  kind: "routing-merge";
  processId: string;
  companyId: number;
  attempt: string;
  apiBase: string;
}

/** Messages of the routing queue. */
export type RoutingMessage = RoutingJob | RoutingPartJob | RoutingMergeJob;

export interface NotificationJob {
  outboxId: number;
  companyId: number;
}

/** One delivery run of a webhook endpoint. */
export interface WebhookJob {
  webhookId: number;
  companyId: number;
}
