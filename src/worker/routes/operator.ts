/** Operator interface (contract.md §3): companies, their first users, the outbox. Not tenant-scoped. */
import { OpenAPIHono, createRoute, z } from "@hono/zod-openapi";
import { companyOutbox, createCompany, createCompanyUser, operatorCompany, shardOverview, updateCompany } from "../../core/services/company-admin";
import { RESERVED_SLUGS, SLUG } from "../../core/services/company-lookup";
import { moveCompanyStep } from "../../core/services/company-move";
import { companyUsage } from "../../core/services/usage";
import type { AppEnv } from "../app-env";
import { validationHook } from "../errors";
import { operatorAuth } from "../middleware/operator";
import { ListQuery, envelope, errorResponses, jsonBody, jsonResponse } from "../openapi";
import { AddressInput } from "../schemas/addresses";
import { CompanySettings, UsageSchema } from "../schemas/company";
import { Email, Password, UserSchema } from "../schemas/users";
import { operatorAreaRoutes } from "./operator-areas";

const operatorErrors = { 403: errorResponses[403], 404: errorResponses[404], 409: errorResponses[409], 422: errorResponses[422] };

/** The company's slug in the path: 2-40 characters (SLUG); an unknown one answers 404. */
const SlugParam = z.object({ slug: z.string().max(40).openapi({ param: { name: "slug", in: "path" } }) });

const Person = { firstname: z.string().max(100).optional(), lastname: z.string().max(100).optional() };

const postCompany = createRoute({
  method: "post",
  path: "/companies",
  operationId: "createCompany",
  tags: ["Operator"],
  summary: "Create a company with its first dispatcher",
  description: "`depot` becomes the company centre and default start of tours; without `lat`/`lng` it is geocoded.",
  security: [{ Operator: [] }],
  request: {
    body: jsonBody(
      z.object({
        slug: z
          .string()
          .max(40)
          .regex(SLUG, "lower-case letters, digits and '-', 2-40 characters")
          .refine((s) => !RESERVED_SLUGS.includes(s), `reserved for the service's own paths (${RESERVED_SLUGS.join(", ")})`)
          .openapi({ description: `Lower-case letters, digits and '-', 2-40 characters; not one of the service's own top-level paths (${RESERVED_SLUGS.join(", ")})` }),
        companyname: z.string().min(1).max(200),
        ...CompanySettings.partial().shape,
        shard: z.number().int().min(0).optional().openapi({ description: "The D1 database (shard) to place the company on; by default the deployment's rule (`SHARD_FOR_NEW_COMPANIES`: the shard with the fewest companies)" }),
        depot: AddressInput.optional(),
        dispatcher: z.object({ email: Email, password: Password, ...Person }),
      }),
    ),
  },
  responses: { 201: jsonResponse(z.object({ id: z.number().int(), slug: z.string(), shard: z.number().int() }), "Company created"), ...operatorErrors },
});

const patchCompany = createRoute({
  method: "patch",
  path: "/companies/{slug}",
  operationId: "updateCompany",
  tags: ["Operator"],
  summary: "Change a company's name and settings",
  description: "Time zone, language of messages, the customer notification rules and how long driver positions stay in the database; fields left out stay as they are.",
  security: [{ Operator: [] }],
  request: {
    params: SlugParam,
    body: jsonBody(z.object({ companyname: z.string().min(1).max(200).optional(), ...CompanySettings.partial().shape })),
  },
  responses: { 200: jsonResponse(z.object({ id: z.number().int(), slug: z.string(), companyname: z.string(), ...CompanySettings.shape }), "The company"), ...operatorErrors },
});

const postUser = createRoute({
  method: "post",
  path: "/companies/{slug}/users",
  operationId: "createCompanyUser",
  tags: ["Operator"],
  summary: "Create a confirmed user in a company",
  description: "Drivers made this way are confirmed but inactive; the response carries their activation `code`.",
  security: [{ Operator: [] }],
  request: {
    params: SlugParam,
    body: jsonBody(z.object({ usertype: z.enum(["dispatcher", "watcher", "driver"]), email: Email, password: Password, ...Person })),
  },
  responses: { 201: jsonResponse(UserSchema.extend({ code: z.string().optional() }), "User created"), ...operatorErrors },
});

const OutboxSchema = z
  .object({
    id: z.number().int(),
    channel: z.enum(["email", "sms"]),
    to: z.string(),
    subject: z.string().nullable().openapi({ description: "As sent (rendered from `template` and `data` when the message goes out)" }),
    body: z.string().nullable().openapi({ description: "Plain-text part as sent" }),
    html: z.string().nullable().openapi({ description: "HTML part as sent (emails)" }),
    template: z.string(),
    data: z.record(z.string(), z.unknown()).nullable(),
    status: z.enum(["queued", "sent", "failed"]),
    attempts: z.number().int(),
    last_error: z.string().nullable(),
    provider_message_id: z.string().nullable(),
    created_at: z.string(),
    sent_at: z.string().nullable(),
  })
  .openapi("OutboxMessage");

const listOutbox = createRoute({
  method: "get",
  path: "/companies/{slug}/outbox",
  operationId: "listCompanyOutbox",
  tags: ["Operator"],
  summary: "Outgoing messages of a company",
  description: "Every outgoing email and SMS with its delivery state: `queued` (waiting or being retried with backoff; `attempts` and `last_error` tell), `sent` (`provider_message_id`, `sent_at`) or `failed` (attempts used up, or an SMS number that cannot be dialled). `q` filters on `status`, `channel`, `template`, `to`, `attempts`, `created_at`, `sent_at`.",
  security: [{ Operator: [] }],
  request: { params: SlugParam, query: ListQuery },
  responses: { 200: jsonResponse(z.union([envelope(OutboxSchema, "OutboxList"), OutboxSchema]), "Messages"), ...operatorErrors },
});

const getUsage = createRoute({
  method: "get",
  path: "/companies/{slug}/usage",
  operationId: "getCompanyUsage",
  tags: ["Operator"],
  summary: "Rows and storage of a company",
  description:
    "Rows of each table that grows (positions, outbox, event log, webhook delivery logs, deliveries, addresses, routes) counted now, an estimate of their bytes in D1 (rows x the bytes per row measured by `npm run bench:capacity`, indexes included) and the company's archived driver-days of positions in R2 with their size. Counting reads the company's rows through its indexes: a company with millions of positions costs as many rows read.",
  security: [{ Operator: [] }],
  request: { params: SlugParam },
  responses: { 200: jsonResponse(UsageSchema, "Usage"), ...operatorErrors },
});

/** The company named by the path, with the bindings and database handle of its shard. */
const MoveSchema = z
  .object({
    slug: z.string(),
    company_id: z.number().int(),
    from: z.number().int().openapi({ description: "The shard the company lived on when the move began" }),
    to: z.number().int(),
    phase: z.enum(["precopy", "preverify", "freeze", "copy", "verify", "reset", "switched", "cleanup", "done"]).openapi({
      description:
        "`precopy`, `preverify`: the company works as ever while its positions and event log are copied and checked up to their newest row; `freeze`: read-only, waiting for every cache to see it; `copy`: rows being copied table by table; `verify`: row counts and checksums compared per table; `reset`: a difference was found, the copy is wiped and made again; `switched`: the directory names the new shard, still read-only while caches let go; `cleanup`: writes work again, the old shard's rows are deleted; `done`.",
    }),
    table: z.string().nullable().openapi({ description: "The table the phase is at" }),
    copied: z.number().int(),
    verified: z.array(z.object({ table: z.string(), rows: z.number().int(), checksum: z.string() })).openapi({ description: "Tables found equal on both shards, with their row count and checksum" }),
    failures: z.number().int().openapi({ description: "Verifications that found a difference (each wiped and redid the copy)" }),
    wait_seconds: z.number().int().openapi({ description: "Seconds before the next call can go on (the grace periods)" }),
    done: z.boolean(),
  })
  .openapi("CompanyMove");

const moveCompany = createRoute({
  method: "post",
  path: "/companies/{slug}/move",
  operationId: "moveCompany",
  tags: ["Operator"],
  summary: "Move a company to another shard (one step)",
  description:
    "Starts moving the company's rows to the D1 database `shard` or, when that move is under way, goes on with it: one bounded step per call (docs/operations/shards.md, the runbook). Call again (after `wait_seconds`) until `done`. From `freeze` until `cleanup` the company is read-only: its writes answer 503 with `Retry-After`, reads work. 409 while the company moves to another shard.",
  security: [{ Operator: [] }],
  request: {
    params: SlugParam,
    body: jsonBody(z.object({ shard: z.number().int().min(0) })),
  },
  responses: { 200: jsonResponse(MoveSchema, "Where the move stands"), ...operatorErrors },
});

const listShards = createRoute({
  method: "get",
  path: "/shards",
  operationId: "listShards",
  tags: ["Operator"],
  summary: "The shards and how many companies each holds",
  description: "Every D1 database declared (`DB` is shard 0, `DB_SHARD_<n>` shard n), the companies the directory places on it and the ones moving away from it.",
  security: [{ Operator: [] }],
  responses: {
    200: jsonResponse(z.array(z.object({ shard: z.number().int(), binding: z.string(), companies: z.number().int(), moving: z.array(z.string()) })).openapi("Shards"), "Shards"),
    403: errorResponses[403],
  },
});

export const operatorRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
operatorRoutes.use("*", operatorAuth);
operatorRoutes
  .openapi(postCompany, async (c) => c.json(await createCompany(c.env, c.req.valid("json")), 201))
  .openapi(patchCompany, async (c) => c.json(await updateCompany(c.env, c.req.valid("param").slug, c.req.valid("json")), 200))
  .openapi(postUser, async (c) => c.json(await createCompanyUser(c.env, c.req.valid("param").slug, c.req.valid("json")), 201))
  .openapi(listOutbox, async (c) => c.json(await companyOutbox(c.env, c.req.valid("param").slug, c.req.valid("query")), 200))
  .openapi(moveCompany, async (c) => c.json(await moveCompanyStep(c.env, c.req.valid("param").slug, c.req.valid("json").shard), 200))
  .openapi(listShards, async (c) => c.json(await shardOverview(c.env), 200))
  .openapi(getUsage, async (c) => {
    const company = await operatorCompany(c.env, c.req.valid("param").slug);
    return c.json(await companyUsage(company.env, company.db, company), 200);
  });
operatorRoutes.route("/", operatorAreaRoutes);
