/**
 * Password rules (NIST SP 800-63B, OWASP): a minimum length, a maximum that
 * keeps hashing cheap, no composition rules, and a refusal of the passwords
 * attackers try first. Online guessing is further bounded by the login
 * throttle (src/durable/login-throttle.ts), offline guessing by scrypt.
 */

export const PASSWORD_MIN_LENGTH = 10;
export const PASSWORD_MAX_LENGTH = 200;

/**
 * The letters of the most common passwords (English and German top lists,
 * and this service's own words), compared with a password's letters: digits
 * and symbols around them (`Summer2026!`, `passwort123456`) change nothing.
 */
const COMMON_WORDS = new Set(
  (
    "password passwort passwd pass qwerty qwertz qwertyuiop qwertzuiop asdf asdfgh asdfghjkl yxcvbnm zxcvbnm qazwsx qazwsxedc " +
    "qweasd qweasdzxc abc abcd abcdef abcdefg abcdefgh abcdefghij letmein welcome willkommen admin administrator root user guest " +
    "login secret geheim test testtest changeme default iloveyou ichliebedich sunshine princess football fussball baseball soccer " +
    "dragon monkey master shadow superman batman trustno starwars hallo hello hallohallo schatz sommer summer winter spring herbst " +
    "fruehling autumn computer internet whatever freedom flower lovely loveme mustang access matrix cheese killer charlie jordan " +
    "hunter ranger buster tigger pepper michael thomas andreas daniel stefan berlin hamburg muenchen deutschland germany schalke " +
    "bayern borussia dispatch dispatcher driver fahrer lieferung delivery route tour"
  ).split(" "),
);

/** Why the password is refused, or null when it is fine. */
export function passwordProblem(password: string): string | null {
  if ([...password].length < PASSWORD_MIN_LENGTH) return `at least ${PASSWORD_MIN_LENGTH} characters`;
  if (password.length > PASSWORD_MAX_LENGTH) return `at most ${PASSWORD_MAX_LENGTH} characters`;
  const letters = password.toLowerCase().replace(/[^\p{L}]/gu, "");
  if (new Set(password).size <= 2 || letters.length < 4 || COMMON_WORDS.has(letters)) return "too common: choose a password that is not on the lists attackers try first";
  return null;
}
