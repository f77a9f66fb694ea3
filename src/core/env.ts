import type { CompanyCoordinatorRpc } from "./coordinator/rpc";
import type { NotificationJob, RoutingMessage, WebhookJob } from "./queues";

/** Bindings declared in wrangler.toml (secrets come from .dev.vars locally). */
export interface Env {
  /** The first database: shard 0, the shard directory and the id blocks (docs/operations/shards.md). */
  DB: D1Database;
  /** Further shards, `DB_SHARD_1`, `DB_SHARD_2`, ... without gaps (db/shards.ts). */
  DB_SHARD_1?: D1Database;
  /**
   * Set by `envForShard`, never a binding: the first database, once `DB` names the
   * company's shard (every service keeps using `env.DB` for the company's rows).
   */
  DIRECTORY?: D1Database;
  /** Where new companies go: `least-loaded` (default: the shard with the fewest companies) or a shard number. */
  SHARD_FOR_NEW_COMPANIES?: string;
  /** Seconds a moving company stays read-only before its rows are copied, and after the switch before it writes again (default 70: the caches of the directory hold 60 s). */
  MOVE_GRACE_SECONDS?: string;
  COMPANY: DurableObjectNamespace<CompanyCoordinatorRpc>;
  ROUTING_QUEUE: Queue<RoutingMessage>;
  NOTIFY_QUEUE: Queue<NotificationJob>;
  WEBHOOK_QUEUE: Queue<WebhookJob>;
  UPLOADS: R2Bucket;
  RATE_LIMITER?: RateLimit;
  /** Requests per second per company admitted by the isolate's token bucket (default 200, the interface's limit). */
  RATE_LIMIT_PER_SECOND?: string;
  JWT_SECRET: string;
  OPERATOR_TOKEN: string;
  TOKEN_TTL_SECONDS?: string;
  /** Recipient of the operator's log copies of outgoing mail. */
  OPERATOR_EMAIL?: string;
  /** Public origin used in links inside emails (activation, registration). */
  PUBLIC_URL?: string;
  /** Outgoing email: `log` (record and log only), `cloudflare` (send_email binding EMAIL) or `http` (Resend-style JSON API). */
  MAIL_PROVIDER?: string;
  /** Sender address of emails; the company's name is the sender name. */
  MAIL_FROM?: string;
  /** Cloudflare Email Service binding (`[[send_email]]`). */
  EMAIL?: SendEmail;
  /** Endpoint of the HTTP mail API (default Resend's) and its API key (secret). */
  MAIL_HTTP_URL?: string;
  MAIL_HTTP_KEY?: string;
  /** Outgoing SMS: `log` or `twilio` (Twilio-compatible Messages API). */
  SMS_PROVIDER?: string;
  SMS_FROM?: string;
  SMS_ACCOUNT_SID?: string;
  /** Secret. */
  SMS_AUTH_TOKEN?: string;
  /** Base URL of the Twilio-compatible API (default https://api.twilio.com). */
  SMS_API_URL?: string;
  /** Failed webhook deliveries in a row before an endpoint is disabled (default 30: about a day of backoff). */
  WEBHOOK_MAX_FAILURES?: string;
  /** `true` only for local development: webhooks may go to http and loopback/private addresses. */
  WEBHOOK_ALLOW_PRIVATE?: string;
  /** Comma-separated origins allowed to call the API from browsers (default: any). */
  CORS_ORIGINS?: string;
  /** Solver search time of a plan up to 200 deliveries in ms (default 8000); larger plans get more (services/routing/budget.ts). */
  ROUTING_TIME_BUDGET_MS?: string;
  /** Plans of at least this many deliveries are improved in parts by several routing consumers (default 1500; services/routing/fan-out.ts). */
  ROUTING_FANOUT_MIN_STOPS?: string;
  /** Deliveries per part of such a plan, at least (default 180; whole tours, so a part ends with the tour that reaches it). */
  ROUTING_FANOUT_PART_STOPS?: string;
  /** Days a final process record stays in the company's Durable Object (default 30). */
  PROCESS_RETENTION_DAYS?: string;
  /** Base URL of an OSRM-compatible road engine (table + route services); unset: embedded great-circle model. */
  ROAD_ENGINE_URL?: string;
  /** Largest table the engine answers per request (OSRM's max-table-size, default 100). */
  ROAD_ENGINE_MAX_TABLE?: string;
  /** Key of the base map's PMTiles archive in `UPLOADS` (default `basemap/region.pmtiles`; docs/features/base-map.md). */
  MAP_ARCHIVE_KEY?: string;
  /** Raster tile URL template ({z}/{x}/{y}) used when there is no archive; the Worker fetches the tiles for the pages. */
  MAP_RASTER_URL?: string;
  /** Attribution text of the raster tiles (default `© OpenStreetMap contributors`) and where it links to. */
  MAP_RASTER_ATTRIBUTION?: string;
  MAP_RASTER_ATTRIBUTION_URL?: string;
  GEOCODER_URL?: string;
  GEOCODER_KIND?: string;
  GEOCODER_KEY?: string;
}
