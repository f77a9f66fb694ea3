/**
 * Compiler from the Flask-Restless search format (contract.md §4) to
 * parameterised SQL over an allow-list of fields. Pure: no I/O, no database.
 *
 * Field names never reach SQL as text: they are looked up in the allow-list,
 * which maps them to drizzle columns; every value becomes a bound parameter.
 */
import { type SQL, type SQLWrapper, and, not, or, sql } from "drizzle-orm";
import { inList } from "../db/sql";
import { unprocessable } from "../errors";
import { normaliseDateTime } from "./time";

export type FieldType = "integer" | "number" | "text" | "boolean" | "datetime" | "json_array";

export interface FieldSpec {
  column: SQLWrapper;
  type: FieldType;
}

/** A to-one (`has`) or to-many (`any`) relation, filtered with its own fields. */
export interface RelationSpec {
  relation: "one" | "many";
  fields: FieldMap;
  /** Wraps the compiled condition on the related rows into an EXISTS over the join. */
  exists: (condition: SQL) => SQL;
}

export type FieldMap = Record<string, FieldSpec | RelationSpec>;

export interface CompiledQuery {
  where?: SQL;
  orderBy: SQL[];
  limit?: number;
  offset: number;
  single: boolean;
}

const OPERATORS: Record<string, string> = {
  "==": "eq", eq: "eq", equals: "eq", equal_to: "eq",
  "!=": "ne", neq: "ne", does_not_equal: "ne", not_equal_to: "ne",
  ">": "gt", gt: "gt",
  "<": "lt", lt: "lt",
  ">=": "ge", ge: "ge", gte: "ge", geq: "ge",
  "<=": "le", le: "le", lte: "le", leq: "le",
  in: "in", not_in: "not_in",
  is_null: "is_null", is_not_null: "is_not_null",
  like: "like", ilike: "ilike",
  has: "has", any: "any",
};

const COMPARE: Record<string, string> = { eq: "=", ne: "<>", gt: ">", lt: "<", ge: ">=", le: "<=" };

/**
 * Bounds of one `q`: D1 binds at most 100 values per statement (the list query adds its own), and
 * SQLite limits the expression depth. An `in` list counts once: it is bound as one JSON parameter.
 */
export const MAX_Q_VALUES = 60;
export const MAX_Q_DEPTH = 10;

/** Values bound so far and the nesting depth of the filter being compiled. */
interface Budget {
  values: number;
  depth: number;
}

function bind(budget: Budget, name: string) {
  if (++budget.values > MAX_Q_VALUES) throw unprocessable(`q compares with at most ${MAX_Q_VALUES} values (use in with a list)`, name);
}

const isRelation = (spec: FieldSpec | RelationSpec): spec is RelationSpec => "relation" in spec;
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Parses and compiles the `q` parameter. Throws a 422 ApiError naming the offending field. */
export function compileQuery(q: string | undefined, fields: FieldMap): CompiledQuery {
  if (q === undefined || q.trim() === "") return { orderBy: [], offset: 0, single: false };
  let parsed: unknown;
  try {
    parsed = JSON.parse(q);
  } catch {
    throw unprocessable("q is not valid JSON", "q");
  }
  if (!isObject(parsed)) throw unprocessable("q must be a JSON object", "q");
  const known = new Set(["filters", "order_by", "limit", "offset", "single", "group_by"]);
  for (const key of Object.keys(parsed)) if (!known.has(key)) throw unprocessable(`Unknown key in q: ${key}`, "q");

  const { filters = [], order_by = [], limit, offset, single = false } = parsed;
  if (!Array.isArray(filters)) throw unprocessable("q.filters must be an array", "q");
  const budget: Budget = { values: 0, depth: 0 };
  const conditions = filters.map((f) => compileFilter(f, fields, budget));
  const where = conditions.length ? and(...conditions) : undefined;

  if (!Array.isArray(order_by)) throw unprocessable("q.order_by must be an array", "q");
  const orderBy = order_by.map((o) => {
    if (!isObject(o) || typeof o.field !== "string") throw unprocessable("order_by entries need a field", "q");
    const spec = scalarField(o.field, fields);
    const direction = o.direction === undefined ? "asc" : String(o.direction).toLowerCase();
    if (direction !== "asc" && direction !== "desc") throw unprocessable(`Unknown order direction: ${String(o.direction)}`, o.field);
    return direction === "asc" ? sql`${spec.column} asc` : sql`${spec.column} desc`;
  });

  return {
    where,
    orderBy,
    limit: limit === undefined || limit === null ? undefined : nonNegativeInt(limit, "limit"),
    offset: offset === undefined || offset === null ? 0 : nonNegativeInt(offset, "offset"),
    single: single === true,
  };
}

function nonNegativeInt(value: unknown, name: string): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0) throw unprocessable(`q.${name} must be a non-negative integer`, name);
  return value;
}

function scalarField(name: string, fields: FieldMap): FieldSpec {
  const spec = Object.hasOwn(fields, name) ? fields[name] : undefined;
  if (!spec) throw unprocessable(`Unknown field: ${name}`, name);
  if (isRelation(spec)) throw unprocessable(`Field ${name} is a relation; use has/any`, name);
  return spec;
}

function compileFilter(filter: unknown, fields: FieldMap, budget: Budget): SQL {
  if (!isObject(filter)) throw unprocessable("Each filter must be an object", "q");
  const nested = (inner: unknown, f: FieldMap) => {
    if (budget.depth >= MAX_Q_DEPTH) throw unprocessable(`q nests filters at most ${MAX_Q_DEPTH} levels deep`, "q");
    budget.depth++;
    const compiled = compileFilter(inner, f, budget);
    budget.depth--;
    return compiled;
  };
  if ("or" in filter || "and" in filter) {
    const key = "or" in filter ? "or" : "and";
    const list = filter[key];
    if (!Array.isArray(list) || list.length === 0) throw unprocessable(`${key} needs a non-empty array of filters`, "q");
    const parts = list.map((f) => nested(f, fields));
    return (key === "or" ? or(...parts) : and(...parts))!;
  }
  if ("not" in filter) return not(nested(filter.not, fields));

  const { name, op } = filter;
  if (typeof name !== "string") throw unprocessable("A filter needs a name", "q");
  if (typeof op !== "string") throw unprocessable(`Filter on ${name} needs an op`, name);
  const operator = OPERATORS[op.toLowerCase()];
  if (!operator) throw unprocessable(`Unknown operator: ${op}`, name);
  const spec = Object.hasOwn(fields, name) ? fields[name] : undefined;
  if (!spec) throw unprocessable(`Unknown field: ${name}`, name);

  if (operator === "has" || operator === "any") return compileMembership(name, operator, spec, filter.val, budget, nested);
  if (isRelation(spec)) throw unprocessable(`Field ${name} is a relation; use has/any`, name);
  const column = spec.column;

  if (operator === "is_null") return sql`${column} is null`;
  if (operator === "is_not_null") return sql`${column} is not null`;

  if ("field" in filter && filter.field !== undefined) {
    if (typeof filter.field !== "string") throw unprocessable("field must be a field name", name);
    const other = scalarField(filter.field, fields);
    const cmp = COMPARE[operator];
    if (!cmp) throw unprocessable(`Operator ${op} cannot compare two fields`, name);
    return sql`${column} ${sql.raw(cmp)} ${other.column}`;
  }

  if (!("val" in filter)) throw unprocessable(`Filter on ${name} needs a val`, name);
  const val = filter.val;
  bind(budget, name);
  switch (operator) {
    case "in":
    case "not_in": {
      if (!Array.isArray(val)) throw unprocessable(`${op} needs an array`, name);
      if (val.length === 0) return operator === "in" ? sql`0 = 1` : sql`1 = 1`;
      const values = inList(column, val.map((v) => coerce(v, spec.type, name)));
      return operator === "in" ? values : sql`not (${values})`;
    }
    case "like":
      if (typeof val !== "string") throw unprocessable("like needs a string pattern", name);
      // SQLite's LIKE ignores ASCII case; GLOB with the translated pattern keeps `like` case-sensitive.
      return sql`${column} glob ${likeToGlob(val)}`;
    case "ilike":
      if (typeof val !== "string") throw unprocessable("ilike needs a string pattern", name);
      return sql`lower(${column}) like lower(${val}) escape '\\'`;
    default: {
      if (val === null) {
        if (operator === "eq") return sql`${column} is null`;
        if (operator === "ne") return sql`${column} is not null`;
        throw unprocessable(`${op} cannot compare with null`, name);
      }
      return sql`${column} ${sql.raw(COMPARE[operator])} ${coerce(val, spec.type, name)}`;
    }
  }
}

function compileMembership(name: string, operator: string, spec: FieldSpec | RelationSpec, val: unknown, budget: Budget, nested: (f: unknown, fields: FieldMap) => SQL): SQL {
  if (isRelation(spec)) {
    const expected = spec.relation === "many" ? "any" : "has";
    if (operator !== expected) throw unprocessable(`Use ${expected} on ${name}`, name);
    if (!isObject(val)) throw unprocessable(`${operator} on ${name} needs a filter object as val`, name);
    return spec.exists(nested(val, spec.fields));
  }
  bind(budget, name);
  if (spec.type !== "json_array") throw unprocessable(`${operator} needs a list or relation field`, name);
  if (val === undefined || isObject(val) || Array.isArray(val)) throw unprocessable(`${operator} on ${name} needs a value`, name);
  return sql`exists (select 1 from json_each(${spec.column}) where json_each.value = ${val as string | number})`;
}

function coerce(value: unknown, type: FieldType, name: string): string | number {
  switch (type) {
    case "integer":
    case "number": {
      const n = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
      if (typeof n !== "number" || !Number.isFinite(n) || (type === "integer" && !Number.isInteger(n)))
        throw unprocessable(`${name} needs a ${type === "integer" ? "whole number" : "number"}`, name);
      return n;
    }
    case "boolean":
      if (value === true || value === 1 || value === "true") return 1;
      if (value === false || value === 0 || value === "false") return 0;
      throw unprocessable(`${name} needs a boolean`, name);
    case "datetime": {
      const normalised = typeof value === "string" ? normaliseDateTime(value) : null;
      if (!normalised) throw unprocessable(`${name} needs an ISO 8601 date-time`, name);
      return normalised;
    }
    default:
      if (typeof value === "string") return value;
      if (typeof value === "number" || typeof value === "boolean") return String(value);
      throw unprocessable(`${name} needs a string`, name);
  }
}

/** Translates a LIKE pattern (`%`, `_`, `\` escapes) into an equivalent GLOB pattern. */
export function likeToGlob(pattern: string): string {
  let out = "";
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i];
    if (ch === "\\" && i + 1 < pattern.length) out += globLiteral(pattern[++i]);
    else if (ch === "%") out += "*";
    else if (ch === "_") out += "?";
    else out += globLiteral(ch);
  }
  return out;
}

const globLiteral = (ch: string) => (ch === "*" || ch === "?" || ch === "[" ? `[${ch}]` : ch);
