import type { Company, Db, Role } from "../context";
import { type SQL, and, eq } from "drizzle-orm";
import { users } from "../db/schema";
import type { Env } from "../env";
import { forbidden } from "../errors";
import { generateCode, hashCode, hashPassword, needsRehash, randomHtmlColor, verifyPassword } from "../lib/crypto";
import { nowIso } from "../lib/time";
import { issueToken } from "../lib/tokens";
import { invitationEmail } from "./messages";
import { type OutgoingMessage, dispatchOutbox, outboxInsert } from "./outbox";

export type UserRow = typeof users.$inferSelect;

/** A user record as the API answers it. */
export interface User {
  id: number;
  firstname: string | null;
  lastname: string | null;
  email: string;
  company_id: number;
  expires: string | null;
  active: boolean;
  confirmed_at: string | null;
  usertype: Role;
}

export const presentUser = (u: UserRow): User => ({
  id: u.id,
  firstname: u.firstname,
  lastname: u.lastname,
  email: u.email,
  company_id: u.company_id,
  expires: u.expires,
  active: u.active,
  confirmed_at: u.confirmed_at,
  usertype: u.usertype,
});

export interface NewUser {
  usertype: Role;
  email: string;
  password?: string;
  firstname?: string | null;
  lastname?: string | null;
  mobilenr?: string | null;
  vehicle?: string | null;
  htmlcolor?: string | null;
  /** Confirmed accounts (operator-made) need no registration. */
  confirmed?: boolean;
  /** Active at creation: dispatchers and watchers; drivers activate with their device. */
  active?: boolean;
}

/**
 * Builds the insert of a new user with a fresh invitation / activation code.
 * The caller batches it with whatever else belongs to the same change.
 */
export async function prepareUser(db: Db, companyId: number | SQL, input: NewUser) {
  const code = generateCode();
  const isDriver = input.usertype === "driver";
  const values = {
    company_id: companyId,
    usertype: input.usertype as Role,
    email: input.email.toLowerCase(),
    password_hash: input.password ? await hashPassword(input.password) : null,
    firstname: input.firstname ?? null,
    lastname: input.lastname ?? null,
    active: input.active ?? !isDriver,
    confirmed_at: input.confirmed ? nowIso() : null,
    code_hash: await hashCode(code),
    ...(isDriver ? { mobilenr: input.mobilenr ?? null, vehicle: input.vehicle ?? "car", status: 0, htmlcolor: input.htmlcolor ?? randomHtmlColor() } : {}),
  };
  return { code, insert: db.insert(users).values(values).returning() };
}

/** POST /adduser/*: the new user plus the invitation email, in one batch. */
export async function inviteUser(env: Env, db: Db, company: Company, input: NewUser, base: string): Promise<{ user: UserRow; code: string }> {
  const { code, insert } = await prepareUser(db, company.id, input);
  const mail: OutgoingMessage = invitationEmail({ base, slug: company.slug, email: input.email, usertype: input.usertype, code });
  const [[user], ids] = await db.batch([insert, outboxInsert(db, company.id, [mail])]);
  await dispatchOutbox(env, company.id, ids);
  return { user, code };
}

/** POST /<slug>/auth: a token for valid credentials of a registered user. */
export async function login(env: Env, db: Db, company: Company, email: string, password: string): Promise<string> {
  const [user] = await db
    .select()
    .from(users)
    .where(and(eq(users.company_id, company.id), eq(users.email, email.toLowerCase())));
  const ok = await verifyPassword(password, user?.password_hash ?? null);
  if (!ok || !user || !user.confirmed_at) throw forbidden("Invalid credentials");
  // A hash of older, weaker parameters is replaced now that the password is known (unless it changed meanwhile).
  if (user.password_hash && needsRehash(user.password_hash)) {
    await db
      .update(users)
      .set({ password_hash: await hashPassword(password) })
      .where(and(eq(users.company_id, company.id), eq(users.id, user.id), eq(users.password_hash, user.password_hash)));
  }
  return issueToken(env, { id: user.id, role: user.usertype, companyId: company.id });
}

/** POST /<slug>/register: the emailed code sets the password and confirms the account. */
export async function register(db: Db, company: Company, email: string, code: string, password: string): Promise<UserRow> {
  const [user] = await db
    .select()
    .from(users)
    .where(and(eq(users.company_id, company.id), eq(users.email, email.toLowerCase())));
  const codeHash = await hashCode(code);
  if (!user || user.code_hash !== codeHash || user.confirmed_at) throw forbidden("Invalid or used registration code");
  const [updated] = await db
    .update(users)
    .set({ password_hash: await hashPassword(password), confirmed_at: nowIso() })
    .where(and(eq(users.id, user.id), eq(users.company_id, company.id)))
    .returning();
  return updated;
}
