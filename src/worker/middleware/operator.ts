import { createMiddleware } from "hono/factory";
import { createDb } from "../../core/db/client";
import type { AppEnv } from "../app-env";
import { forbidden } from "../../core/errors";
import { constantTimeEqual } from "../../core/lib/crypto";

/** Operator endpoints sit outside tenancy, behind `Authorization: Bearer <OPERATOR_TOKEN>`. */
export const operatorAuth = createMiddleware<AppEnv>(async (c, next) => {
  const header = c.req.header("Authorization") ?? "";
  const token = header.startsWith("Bearer ") ? header.slice(7) : "";
  if (!c.env.OPERATOR_TOKEN || !constantTimeEqual(token, c.env.OPERATOR_TOKEN)) throw forbidden("Invalid operator token");
  c.set("db", createDb(c.env.DB));
  await next();
});
