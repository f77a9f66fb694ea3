import { randomBytes, scrypt, timingSafeEqual } from "node:crypto";

/**
 * Passwords: scrypt (memory-hard, stronger than PBKDF2 at the 100,000
 * iterations deployed Workers allow), salted, parameters stored with the hash
 * so they can be raised without breaking existing logins (`needsRehash`).
 * N = 2^14, r = 8, p = 5: the OWASP Password Storage Cheat Sheet's setting at
 * 16 MiB (a Worker has 128 MB); about 0.12 s of CPU per hash (measured with
 * Node's scrypt, the same native code as workerd's), where p = 1 took 0.03 s.
 */
const SCRYPT = { N: 16384, r: 8, p: 5, keylen: 32 };

function scryptAsync(password: string, salt: Buffer, N: number, r: number, p: number, keylen: number): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password.normalize("NFKC"), salt, keylen, { N, r, p, maxmem: 64 * 1024 * 1024 }, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scryptAsync(password, salt, SCRYPT.N, SCRYPT.r, SCRYPT.p, SCRYPT.keylen);
  return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString("base64")}$${key.toString("base64")}`;
}

export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  if (!stored) {
    // Same work for unknown users, so timing does not reveal which emails exist.
    await hashPassword(password);
    return false;
  }
  const [scheme, N, r, p, salt, hash] = stored.split("$");
  if (scheme !== "scrypt") return false;
  const expected = Buffer.from(hash, "base64");
  const key = await scryptAsync(password, Buffer.from(salt, "base64"), +N, +r, +p, expected.length);
  return timingSafeEqual(key, expected);
}

/** Whether a stored hash was made with other parameters than today's: a successful login hashes the password again. */
export function needsRehash(stored: string): boolean {
  const [scheme, N, r, p] = stored.split("$");
  return scheme !== "scrypt" || +N !== SCRYPT.N || +r !== SCRYPT.r || +p !== SCRYPT.p;
}

/** Invitation / activation codes: 12 characters without ambiguous letters. */
export function generateCode(): string {
  const alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789";
  return [...randomBytes(12)].map((b) => alphabet[b % alphabet.length]).join("");
}

/** Codes are stored hashed: a leaked table does not activate accounts. */
export async function hashCode(code: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(code.trim().toUpperCase()));
  return Buffer.from(digest).toString("hex");
}

export function constantTimeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  // Compare against itself on length mismatch to keep the time independent of the input.
  return x.length === y.length ? timingSafeEqual(x, y) : (timingSafeEqual(x, x), false);
}

export function randomHtmlColor(): string {
  return randomBytes(3).toString("hex");
}
