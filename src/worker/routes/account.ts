/** Outside `/api`: the token endpoint and registration with an emailed code (contract.md §2, §3). */
import { OpenAPIHono, createRoute, z } from "@hono/zod-openapi";
import { Email, Password, UserSchema } from "../schemas/users";
import { ApiError, forbidden } from "../../core/errors";
import type { Context } from "hono";
import type { AppEnv } from "../app-env";
import { validationHook } from "../errors";
import { SERVER_PAGE_HEADERS } from "../html-page";
import { PASSWORD_MIN_LENGTH } from "../../core/lib/password-rules";
import { renderRegistrationDone, renderRegistrationForm } from "../registration-page";
import { companyLanguage } from "../../core/services/company-records";
import { errorResponses, jsonBody, jsonResponse } from "../openapi";
import { login, presentUser, register } from "../../core/services/users";
import { throttledAttempt } from "../credential-attempts";

const auth = createRoute({
  method: "post",
  path: "/auth",
  operationId: "logIn",
  security: [],
  tags: ["Authentication"],
  summary: "Obtain an access token",
  description:
    "Send the token as `Authorization: JWT <access_token>` on every `/api` call. Failed attempts are throttled per account and per client address " +
    "(`CF-Connecting-IP`): from the 5th failure for an account (10th from an address) the next attempt must wait 1 s, doubling up to 15 minutes " +
    "(429 with `Retry-After`, whether or not the email exists); a success clears the account's count, one failure is forgotten per 15 minutes.",
  request: { body: jsonBody(z.object({ email: Email, password: z.string().max(200) })) },
  responses: {
    200: jsonResponse(z.object({ access_token: z.string() }), "Token issued"),
    403: errorResponses[403],
    422: errorResponses[422],
    429: errorResponses[429],
  },
});

const registerRoute = createRoute({
  method: "post",
  path: "/register",
  operationId: "register",
  security: [],
  tags: ["Authentication"],
  summary: "Register with an invitation or activation code",
  description:
    "The code comes by email from `POST /api/adduser/*` or `POST /api/driver`. Sets the password and confirms the account. " +
    "Wrong codes are throttled like logins (429 with `Retry-After`, see `POST /{slug}/auth`).",
  request: { body: jsonBody(z.object({ email: Email, code: z.string().min(1).max(100), password: Password })) },
  responses: {
    200: jsonResponse(UserSchema, "Registered"),
    403: errorResponses[403],
    422: errorResponses[422],
    429: errorResponses[429],
  },
});

export const accountRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook })
  .openapi(auth, async (c) => {
    const { email, password } = c.req.valid("json");
    const access_token = await throttledAttempt(c, "login", email, () => login(c.env, c.get("db"), c.get("company"), email, password));
    return c.json({ access_token }, 200);
  }, (result) => {
    // Missing or malformed credentials are a failed login, not a validation error.
    if (!result.success) throw forbidden("Invalid credentials");
  })
  .openapi(registerRoute, async (c) => {
    const { email, code, password } = c.req.valid("json");
    const user = await throttledAttempt(c, "register", email, () => register(c.get("db"), c.get("company"), email, code, password));
    return c.json(presentUser(user), 200);
  })
  // The page behind the emailed link: a form for people, posting to the form handler below.
  .get("/register", async (c) => {
    const company = c.get("company");
    const html = renderRegistrationForm({ lang: await companyLanguage(c.get("db"), c.get("company").id), companyname: company.companyname, action: `/${company.slug}/register/form`, code: c.req.query("code") ?? "" });
    return page(c, html, 200);
  })
  .post("/register/form", async (c) => {
    const company = c.get("company");
    const lang = await companyLanguage(c.get("db"), c.get("company").id);
    const form = await c.req.parseBody().catch(() => ({}) as Record<string, unknown>);
    const text = (name: string) => (typeof form[name] === "string" ? (form[name] as string) : "");
    const again = (error: string, status: 403 | 422 | 429) =>
      page(c, renderRegistrationForm({ lang, companyname: company.companyname, action: `/${company.slug}/register/form`, code: text("code"), email: text("email"), error }), status);
    const email = Email.safeParse(text("email"));
    const password = Password.safeParse(text("password"));
    if (!email.success) return again(lang === "de" ? "Bitte eine gültige E-Mail-Adresse angeben." : "Please give a valid email address.", 422);
    if (!password.success || !text("code"))
      return again(
        lang === "de"
          ? `Das Passwort braucht mindestens ${PASSWORD_MIN_LENGTH} Zeichen und darf keins der häufigsten Passwörter sein.`
          : `The password needs at least ${PASSWORD_MIN_LENGTH} characters and must not be one of the most common passwords.`,
        422,
      );
    try {
      const user = await throttledAttempt(c, "register", email.data, () => register(c.get("db"), company, email.data, text("code"), password.data));
      const driver = user.usertype === "driver";
      return page(c, renderRegistrationDone({ lang, companyname: company.companyname, driver, appLink: `/${company.slug}/${driver ? "driver" : "console"}` }), 200);
    } catch (err) {
      if (err instanceof ApiError && err.status === 403) return again(lang === "de" ? "Code und E-Mail passen nicht zusammen, oder der Code wurde schon benutzt." : "The code does not match this email, or it was used already.", 403);
      if (err instanceof ApiError && err.status === 429) {
        c.header("Retry-After", err.headers["Retry-After"]);
        return again(lang === "de" ? `Zu viele Fehlversuche; bitte in ${err.headers["Retry-After"]} s noch einmal.` : `Too many failed attempts; please try again in ${err.headers["Retry-After"]} s.`, 429);
      }
      throw err;
    }
  });

function page(c: Context<AppEnv>, html: string, status: 200 | 403 | 422 | 429) {
  for (const [name, value] of Object.entries(SERVER_PAGE_HEADERS)) c.header(name, value);
  return c.html(html, status);
}
