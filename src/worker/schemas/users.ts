/** Users on the wire: the record, and the email and password inputs. */
import { z } from "@hono/zod-openapi";
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH, passwordProblem } from "../../core/lib/password-rules";
import { DateTime } from "../openapi";

export const UserSchema = z
  .object({
    id: z.number().int(),
    firstname: z.string().nullable(),
    lastname: z.string().nullable(),
    email: z.string(),
    company_id: z.number().int(),
    expires: DateTime.nullable(),
    active: z.boolean(),
    confirmed_at: DateTime.nullable(),
    usertype: z.enum(["dispatcher", "watcher", "driver"]),
  })
  .openapi("User");

/** RFC 5321 allows at most 254 characters in an address. */
const MAX_EMAIL_LENGTH = 254;
export const Email = z.string().max(MAX_EMAIL_LENGTH).trim().toLowerCase().pipe(z.email()).openapi({ type: "string", format: "email", maxLength: MAX_EMAIL_LENGTH });
export const Password = z
  .string()
  .superRefine((password, ctx) => {
    const problem = passwordProblem(password);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  })
  .openapi({
    type: "string",
    minLength: PASSWORD_MIN_LENGTH,
    maxLength: PASSWORD_MAX_LENGTH,
    description: `At least ${PASSWORD_MIN_LENGTH} characters; refused when it is one of the most common passwords (its letters a common word such as "Summer2026!", or mostly digits and symbols)`,
  });
