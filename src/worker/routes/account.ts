/** Outside `/api`: the token endpoint and registration with an emailed code (contract.md §2, §3). */
import { OpenAPIHono, createRoute, z } from "@hono/zod-openapi";
import type { AppEnv } from "../env";
import { forbidden, validationHook } from "../errors";
import { errorResponses, jsonBody, jsonResponse } from "../openapi";
import { Email, Password, UserSchema, login, presentUser, register } from "../services/users";

const auth = createRoute({
  method: "post",
  path: "/auth",
  tags: ["Authentication"],
  summary: "Obtain an access token",
  description: "Send the token as `Authorization: JWT <access_token>` on every `/api` call.",
  request: { body: jsonBody(z.object({ email: Email, password: z.string().max(200) })) },
  responses: {
    200: jsonResponse(z.object({ access_token: z.string() }), "Token issued"),
    403: errorResponses[403],
    422: errorResponses[422],
  },
});

const registerRoute = createRoute({
  method: "post",
  path: "/register",
  tags: ["Authentication"],
  summary: "Register with an invitation or activation code",
  description: "The code comes by email from `POST /api/adduser/*` or `POST /api/driver`. Sets the password and confirms the account.",
  request: { body: jsonBody(z.object({ email: Email, code: z.string().min(1).max(100), password: Password })) },
  responses: {
    200: jsonResponse(UserSchema, "Registered"),
    403: errorResponses[403],
    422: errorResponses[422],
  },
});

export const accountRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook })
  .openapi(auth, async (c) => {
    const { email, password } = c.req.valid("json");
    const access_token = await login(c.env, c.get("db"), c.get("company"), email, password);
    return c.json({ access_token }, 200);
  }, (result) => {
    // Missing or malformed credentials are a failed login, not a validation error.
    if (!result.success) throw forbidden("Invalid credentials");
  })
  .openapi(registerRoute, async (c) => {
    const { email, code, password } = c.req.valid("json");
    const user = await register(c.get("db"), c.get("company"), email, code, password);
    return c.json(presentUser(user), 200);
  });
