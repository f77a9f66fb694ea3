/**
 * Full-text address search over the FTS5 index `addresses_fts` (migration
 * 0001_address_search): user query -> safe FTS5 expression -> bm25-ranked
 * addresses of one company.
 *
 * The user's query language:
 *   - terms separated by spaces are all required (implicit AND);
 *   - `AND`, `OR`, `NOT` (upper case only) combine terms; `NOT` excludes
 *     (`a NOT b`); precedence as in FTS5: NOT, then AND, then OR;
 *   - `"..."` matches the words as an exact phrase;
 *   - `abc*` (or `"ab cd"*`) matches words starting with the prefix;
 *   - case, umlauts and accents are ignored ("muller" finds "Müller").
 * Everything else that FTS5 would read as syntax (parentheses, `:`, `{}`,
 * `^`, `+`, `NEAR(...)`, lower-case operators, stray quotes and stars) is
 * never passed through: each term is re-quoted as an FTS5 string, so any
 * input is either a valid expression or, when nothing searchable is left,
 * a 422 naming `query`.
 */
import { unprocessable } from "../errors";
import type { AddressRow } from "./addresses";

/** The name columns (always searched) and the postal-code/city columns (`citocode=true`). */
export const NAME_COLUMNS = ["contactcompany", "contactlastname", "contactfirstname"] as const;
export const PLACE_COLUMNS = ["postalcode", "city"] as const;

export const SEARCH_LIMIT_DEFAULT = 10;
export const SEARCH_LIMIT_MAX = 100;
/** Bounds the work one query can cause. */
const MAX_TERMS = 16;

type Token = { kind: "term"; text: string; prefix: boolean } | { kind: "op"; op: "AND" | "OR" | "NOT" };

/** Letters, digits and combining marks: what the unicode61 tokenizer keeps as word characters. */
const WORD_CHARS = /[\p{L}\p{N}\p{M}]+/gu;

/** The searchable words of a piece of input, joined by single spaces ("" when none). */
function words(text: string): string {
  return (text.normalize("NFC").match(WORD_CHARS) ?? []).join(" ");
}

/** Splits raw input into terms (words or quoted phrases, with a prefix star) and upper-case operators. */
function tokenize(input: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  const n = input.length;
  while (i < n) {
    const ch = input[i];
    if (/\s/.test(ch) || ch === "(" || ch === ")") {
      i++;
      continue;
    }
    if (ch === '"') {
      // A phrase up to the closing quote; an unbalanced quote runs to the end of the input.
      const close = input.indexOf('"', i + 1);
      const end = close === -1 ? n : close;
      const text = words(input.slice(i + 1, end));
      i = close === -1 ? n : close + 1;
      let prefix = false;
      while (i < n && input[i] === "*") {
        prefix = true;
        i++;
      }
      if (text) tokens.push({ kind: "term", text, prefix });
      continue;
    }
    let j = i;
    while (j < n && !/\s/.test(input[j]) && input[j] !== '"' && input[j] !== "(" && input[j] !== ")") j++;
    const raw = input.slice(i, j);
    i = j;
    if (raw === "AND" || raw === "OR" || raw === "NOT") {
      tokens.push({ kind: "op", op: raw });
      continue;
    }
    const prefix = raw.endsWith("*");
    const text = words(raw);
    if (text) tokens.push({ kind: "term", text, prefix });
  }
  return tokens;
}

const quote = (text: string) => `"${text.replaceAll('"', '""')}"`;

export interface TranslatedQuery {
  /** The FTS5 expression (without column filter). */
  expression: string;
  /** Number of terms kept. */
  terms: number;
}

/**
 * Translates user input into a safe FTS5 expression. Operators without a term
 * on both sides are dropped, of several operators in a row the last one
 * counts, and juxtaposed terms get an explicit AND. Null when no term is left.
 */
export function translateSearchQuery(input: string): TranslatedQuery | null {
  const parts: string[] = [];
  let pending: "AND" | "OR" | "NOT" | null = null;
  let terms = 0;
  for (const token of tokenize(input)) {
    if (token.kind === "op") {
      if (terms > 0) pending = token.op; // an operator before the first term has no left operand
      continue;
    }
    if (terms === MAX_TERMS) break;
    if (terms > 0) parts.push(pending ?? "AND");
    parts.push(quote(token.text) + (token.prefix ? "*" : ""));
    pending = null;
    terms++;
  }
  if (terms === 0) return null;
  return { expression: parts.join(" "), terms };
}

/** The MATCH argument: the expression restricted to the searched columns. */
export function searchMatchExpression(expression: string, citocode: boolean): string {
  const columns = citocode ? [...NAME_COLUMNS, ...PLACE_COLUMNS] : NAME_COLUMNS;
  return `{${columns.join(" ")}} : (${expression})`;
}

export interface SearchOptions {
  query: string;
  limit?: number;
  citocode?: boolean;
}

/**
 * The company's addresses matching `query`, best (lowest bm25) first, ties by
 * id. Throws 422 naming `query` when the input has nothing searchable.
 */
export async function searchAddresses(d1: D1Database, companyId: number, options: SearchOptions): Promise<AddressRow[]> {
  const translated = translateSearchQuery(options.query);
  if (!translated) throw unprocessable("query has no searchable words (letters or digits)", "query");
  const limit = Math.min(Math.max(1, Math.trunc(options.limit ?? SEARCH_LIMIT_DEFAULT)), SEARCH_LIMIT_MAX);
  const match = searchMatchExpression(translated.expression, options.citocode ?? false);
  try {
    const { results } = await d1
      .prepare(
        `SELECT a.* FROM addresses_fts
         JOIN addresses a ON a.id = addresses_fts.rowid
         WHERE addresses_fts MATCH ?1 AND a.company_id = ?2
         ORDER BY bm25(addresses_fts), a.id
         LIMIT ?3`,
      )
      .bind(match, companyId, limit)
      .all<AddressRow>();
    return results;
  } catch (err) {
    // The translation only emits valid syntax; should FTS5 still refuse an expression, that is bad input, not a 500.
    if (err instanceof Error && /fts5|syntax error|MATCH/i.test(err.message)) {
      throw unprocessable("query could not be interpreted as a search expression", "query");
    }
    throw err;
  }
}
