/** The login throttle's questions and answers (src/durable/login-throttle.ts counts the attempts). */

export type AttemptKind = "login" | "register" | "activate";
/** Who is attempting: the account (email, or driver id) and the client's address. */
export interface AttemptSubjects {
  account: string;
  address: string;
}
export type AttemptVerdict = { allowed: true } | { allowed: false; retryAfterSeconds: number; failures: number };
export type AttemptOutcome = "succeeded" | "void";
