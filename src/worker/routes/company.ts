/** The company record, its centre address, dispatchers, and inviting users. */
import { OpenAPIHono, z } from "@hono/zod-openapi";
import { Email, UserSchema } from "../schemas/users";
import { AddressSchema } from "../schemas/addresses";
import { notFound } from "../../core/errors";
import { allOnOnePage, listObjects } from "../../core/db/list";
import { and, eq } from "drizzle-orm";
import { addresses, companies, users } from "../../core/db/schema";
import type { AppEnv } from "../app-env";
import { validationHook } from "../errors";
import type { FieldMap } from "../../core/lib/filters";
import { IdParam, ListQuery, apiRoute, envelope, jsonBody, jsonResponse } from "../openapi";
import { presentAddress } from "../../core/services/addresses";
import { type UserRow, inviteUser, presentUser } from "../../core/services/users";
import { CompanySettings } from "../schemas/company";

const CompanySchema = z
  .object({
    id: z.number().int(),
    companyname: z.string(),
    location_id: z.number().int().nullable(),
    pricing_package: z.number().int(),
    test_phase: z.boolean(),
    ...CompanySettings.shape,
  })
  .openapi("Company");

export const userFields: FieldMap = {
  id: { column: users.id, type: "integer" },
  firstname: { column: users.firstname, type: "text" },
  lastname: { column: users.lastname, type: "text" },
  email: { column: users.email, type: "text" },
  active: { column: users.active, type: "boolean" },
  confirmed_at: { column: users.confirmed_at, type: "datetime" },
  expires: { column: users.expires, type: "datetime" },
  usertype: { column: users.usertype, type: "text" },
};

const getCompany = apiRoute({
  method: "get",
  path: "/company",
  tags: ["Company"],
  summary: "The company (a list with exactly one element)",
  responses: { 200: jsonResponse(envelope(CompanySchema, "CompanyList"), "The company") },
});

const getCompanyAddress = apiRoute({
  method: "get",
  path: "/companyaddress",
  tags: ["Company"],
  summary: "Address of the company centre (depot)",
  responses: { 200: jsonResponse(AddressSchema, "The depot address") },
});

const listDispatchers = apiRoute({
  method: "get",
  path: "/dispatcher",
  tags: ["Company"],
  summary: "Dispatcher users",
  request: { query: ListQuery },
  responses: { 200: jsonResponse(z.union([envelope(UserSchema, "UserList"), UserSchema]), "Dispatchers (or one with q.single)") },
});

const getDispatcher = apiRoute({
  method: "get",
  path: "/dispatcher/{dispatcher_id}",
  tags: ["Company"],
  summary: "One dispatcher user",
  request: { params: IdParam("dispatcher_id") },
  responses: { 200: jsonResponse(UserSchema, "The dispatcher") },
});

const NewUserBody = z.object({
  firstname: z.string().max(100).optional(),
  lastname: z.string().max(100).optional(),
  email: Email,
});

const addUser = (usertype: "watcher" | "dispatcher") =>
  apiRoute({
    method: "post",
    path: `/adduser/${usertype}`,
    tags: ["Company"],
    summary: `Invite a ${usertype}`,
    description: `Creates the ${usertype} and emails an invitation code for \`POST /<slug>/register\`. 409 when the email is taken in this company.`,
    request: { body: jsonBody(NewUserBody) },
    responses: { 201: jsonResponse(UserSchema, `The new ${usertype}`) },
  });

const addWatcher = addUser("watcher");
const addDispatcher = addUser("dispatcher");

const presentUsers = (rows: UserRow[]) => rows.map(presentUser);

export const companyRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook })
  .openapi(getCompany, async (c) => {
    const [row] = await c.get("db").select().from(companies).where(eq(companies.id, c.get("company").id));
    const { id, companyname, location_id, pricing_package, test_phase, timezone, language, eta_update_minutes, notify_stops_before, position_retention_days, proof_retention_days, proof_on_tracking_page } = row;
    return c.json(allOnOnePage([{ id, companyname, location_id, pricing_package, test_phase, timezone, language, eta_update_minutes, notify_stops_before, position_retention_days, proof_retention_days, proof_on_tracking_page }]), 200);
  })
  .openapi(getCompanyAddress, async (c) => {
    const company = c.get("company");
    if (company.location_id === null) throw notFound("Company address");
    const [row] = await c
      .get("db")
      .select()
      .from(addresses)
      .where(and(eq(addresses.id, company.location_id), eq(addresses.company_id, company.id)));
    if (!row) throw notFound("Company address");
    return c.json(presentAddress(row), 200);
  })
  .openapi(listDispatchers, async (c) => {
    const cid = c.get("company").id;
    const result = await listObjects(
      c.get("db"),
      { table: users, scope: and(eq(users.company_id, cid), eq(users.usertype, "dispatcher")), fields: userFields, idColumn: users.id, present: presentUsers },
      c.req.valid("query"),
    );
    return c.json(result, 200);
  })
  .openapi(getDispatcher, async (c) => {
    const { dispatcher_id } = c.req.valid("param");
    const [row] = await c
      .get("db")
      .select()
      .from(users)
      .where(and(eq(users.id, dispatcher_id), eq(users.company_id, c.get("company").id), eq(users.usertype, "dispatcher")));
    if (!row) throw notFound("Dispatcher");
    return c.json(presentUser(row), 200);
  })
  .openapi(addWatcher, async (c) => {
    const { user } = await inviteUser(c.env, c.get("db"), c.get("company"), { usertype: "watcher", ...c.req.valid("json") }, publicBase(c));
    return c.json(presentUser(user), 201);
  })
  .openapi(addDispatcher, async (c) => {
    const { user } = await inviteUser(c.env, c.get("db"), c.get("company"), { usertype: "dispatcher", ...c.req.valid("json") }, publicBase(c));
    return c.json(presentUser(user), 201);
  });

/** Origin used in emailed links: PUBLIC_URL when configured, else the request's. */
export const publicBase = (c: { env: AppEnv["Bindings"]; req: { url: string } }) => c.env.PUBLIC_URL ?? new URL(c.req.url).origin;

/** Absolute base of the company's API (`<origin>/<slug>/api`), for links that queue consumers hand out later. */
export const apiBase = (c: { env: AppEnv["Bindings"]; req: { url: string }; get(key: "company"): AppEnv["Variables"]["company"] }) =>
  `${publicBase(c).replace(/\/$/, "")}/${c.get("company").slug}/api`;
