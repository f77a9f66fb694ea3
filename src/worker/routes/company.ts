/** The company record, its centre address, dispatchers, and inviting users. */
import { OpenAPIHono, z } from "@hono/zod-openapi";
import { Email, UserSchema } from "../schemas/users";
import { AddressSchema } from "../schemas/addresses";
import { allOnOnePage } from "../../core/db/list";
import { companyAddress, companyRecord, getDispatcher, listDispatchers } from "../../core/services/company-records";
import type { AppEnv } from "../app-env";
import { validationHook } from "../errors";
import { IdParam, ListQuery, apiRoute, envelope, jsonBody, jsonResponse } from "../openapi";
import { inviteUser, presentUser } from "../../core/services/users";
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

const getCompany = apiRoute({
  method: "get",
  path: "/company",
  operationId: "getCompany",
  tags: ["Company"],
  summary: "The company (a list with exactly one element)",
  responses: { 200: jsonResponse(envelope(CompanySchema, "CompanyList"), "The company") },
});

const getCompanyAddress = apiRoute({
  method: "get",
  path: "/companyaddress",
  operationId: "getCompanyAddress",
  tags: ["Company"],
  summary: "Address of the company centre (depot)",
  responses: { 200: jsonResponse(AddressSchema, "The depot address") },
});

const getDispatchers = apiRoute({
  method: "get",
  path: "/dispatcher",
  operationId: "listDispatchers",
  tags: ["Company"],
  summary: "Dispatcher users",
  request: { query: ListQuery },
  responses: { 200: jsonResponse(z.union([envelope(UserSchema, "UserList"), UserSchema]), "Dispatchers (or one with q.single)") },
});

const getDispatcherRoute = apiRoute({
  method: "get",
  path: "/dispatcher/{dispatcher_id}",
  operationId: "getDispatcher",
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
    operationId: `add${usertype[0].toUpperCase()}${usertype.slice(1)}`,
    tags: ["Company"],
    summary: `Invite a ${usertype}`,
    description: `Creates the ${usertype} and emails an invitation code for \`POST /<slug>/register\`. 409 when the email is taken in this company.`,
    request: { body: jsonBody(NewUserBody) },
    responses: { 201: jsonResponse(UserSchema, `The new ${usertype}`) },
  });

const addWatcher = addUser("watcher");
const addDispatcher = addUser("dispatcher");


export const companyRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook })
  .openapi(getCompany, async (c) => c.json(allOnOnePage([await companyRecord(c.get("db"), c.get("company").id)]), 200))
  .openapi(getCompanyAddress, async (c) => c.json(await companyAddress(c.get("db"), c.get("company")), 200))
  .openapi(getDispatchers, async (c) => c.json(await listDispatchers(c.get("db"), c.get("company").id, c.req.valid("query")), 200))
  .openapi(getDispatcherRoute, async (c) => c.json(await getDispatcher(c.get("db"), c.get("company").id, c.req.valid("param").dispatcher_id), 200))
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
