/**
 * Request generators for the fuzz suite, derived from the service's own
 * OpenAPI document: values valid by construction for a JSON schema, and
 * mutations of a valid value that are invalid by construction (each one breaks
 * a rule the schema states, so the service must refuse it).
 */
import fc from "fast-check";

export type Schema = Record<string, any>;
export type Doc = { paths: Record<string, Record<string, any>>; components: { schemas: Record<string, Schema> } };

/** A generated value with the reason it must be refused (`why`), or `why: null` when it is valid by construction. */
export interface Mutated {
  value: unknown;
  why: string;
}

const FAR_DATES = ["0001-01-01T00:00:00Z", "1970-01-01T00:00:00Z", "2038-01-19T03:14:08Z", "9999-12-31T23:59:59Z", "2026-02-29T10:00:00Z", "2028-02-29T24:00:00"];
const HOSTILE_TEXT = ["'; DROP TABLE users; --", "\u0000", "%_%", "\"quoted\"", "<script>alert(1)</script>", "ﾟ･✿ヾ╲(｡◕‿◕｡)╱✿･ﾟ", "\ud800", "  ", "NULL", "../../etc/passwd"];

export class SchemaTools {
  constructor(private readonly doc: Doc) {}

  /** The schema with `$ref` followed and `allOf` merged. */
  deref(schema: Schema | undefined): Schema {
    if (!schema) return {};
    if (schema.$ref) return this.deref(this.doc.components.schemas[schema.$ref.split("/").pop()!]);
    if (schema.allOf) {
      const parts = schema.allOf.map((s: Schema) => this.deref(s));
      const merged: Schema = { ...schema, allOf: undefined };
      for (const p of parts) {
        Object.assign(merged, { ...p, properties: { ...merged.properties, ...p.properties }, required: [...(merged.required ?? []), ...(p.required ?? [])] });
      }
      return merged;
    }
    return schema;
  }

  /** JSON types the schema accepts, or null when it accepts anything. */
  types(schema: Schema): Set<string> | null {
    const s = this.deref(schema);
    if (s.enum) return new Set(s.enum.map((v: unknown) => (v === null ? "null" : typeof v)));
    const branches = s.anyOf ?? s.oneOf;
    if (branches) {
      const all = new Set<string>();
      for (const b of branches) {
        const t = this.types(b);
        if (!t) return null;
        t.forEach((x) => all.add(x));
      }
      return all;
    }
    if (!s.type) return null;
    const list: string[] = Array.isArray(s.type) ? s.type : [s.type];
    return new Set(list.map((t) => (t === "integer" ? "number" : t)));
  }

  /** Values valid by construction. */
  valid(schema: Schema, depth = 0): fc.Arbitrary<unknown> {
    const s = this.deref(schema);
    if (s.enum) return fc.constantFrom(...s.enum);
    const branches = s.anyOf ?? s.oneOf;
    if (branches) return fc.oneof(...branches.map((b: Schema) => this.valid(b, depth + 1)));
    if (Array.isArray(s.type)) {
      return fc.oneof(...s.type.map((t: string) => (t === "null" ? fc.constant(null) : this.valid({ ...s, type: t }, depth))));
    }
    switch (s.type) {
      case "string":
        return this.validString(s);
      case "integer": {
        const min = s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 1 : -(2 ** 31));
        const max = s.maximum ?? (s.exclusiveMaximum !== undefined ? s.exclusiveMaximum - 1 : 2 ** 31 - 1);
        return fc.oneof(fc.integer({ min, max }), fc.constantFrom(min, max), fc.integer({ min: Math.max(min, 0), max: Math.min(max, 20) }));
      }
      case "number": {
        const min = s.minimum ?? s.exclusiveMinimum ?? -1e9;
        const max = s.maximum ?? s.exclusiveMaximum ?? 1e9;
        const d = fc.double({ min, max, noNaN: true, noDefaultInfinity: true, minExcluded: s.exclusiveMinimum !== undefined, maxExcluded: s.exclusiveMaximum !== undefined });
        return s.exclusiveMinimum === undefined && s.exclusiveMaximum === undefined ? fc.oneof(d, fc.constantFrom(min, max)) : d;
      }
      case "boolean":
        return fc.boolean();
      case "null":
        return fc.constant(null);
      case "array": {
        if (s.prefixItems) return fc.tuple(...s.prefixItems.map((p: Schema) => this.valid(p, depth + 1)));
        const minLength = s.minItems ?? 0;
        const maxLength = Math.max(minLength, Math.min(s.maxItems ?? 3, depth > 2 ? minLength : 3));
        return fc.array(this.valid(s.items ?? {}, depth + 1), { minLength, maxLength });
      }
      case "object": {
        const props: Record<string, fc.Arbitrary<unknown>> = {};
        for (const [k, v] of Object.entries(s.properties ?? {})) props[k] = this.valid(v as Schema, depth + 1);
        return fc.record(props, { requiredKeys: s.required ?? [] });
      }
      default:
        return fc.jsonValue({ maxDepth: 2 });
    }
  }

  private validString(s: Schema): fc.Arbitrary<string> {
    const maxLength = s.maxLength ?? 60;
    const minLength = s.minLength ?? 0;
    if (s.format === "date-time") {
      return fc.oneof(
        fc.constantFrom(...FAR_DATES),
        fc.date({ min: new Date("1900-01-01T00:00:00Z"), max: new Date("2200-01-01T00:00:00Z"), noInvalidDate: true }).map((d) => d.toISOString()),
      );
    }
    if (s.format === "email") return fc.tuple(fc.stringMatching(/^[a-z0-9]{1,12}$/), fc.stringMatching(/^[a-z]{1,8}$/)).map(([a, b]) => `${a}@${b}.example`);
    if (s.format === "uuid") return fc.uuid();
    if (s.pattern) return s.example !== undefined ? fc.constant(String(s.example)) : fc.stringMatching(new RegExp(s.pattern)).filter((v) => v.length <= maxLength);
    const fits = (v: string) => v.length >= minLength && v.length <= maxLength;
    return fc.oneof(
      fc.string({ minLength, maxLength: Math.min(maxLength, 40) }),
      fc.string({ unit: "grapheme", minLength, maxLength: Math.min(maxLength, 20) }),
      fc.constantFrom(...HOSTILE_TEXT, "x".repeat(Math.max(minLength, maxLength))).filter(fits),
      ...(s.example !== undefined ? [fc.constant(String(s.example))] : []),
    );
  }

  /** A value of a JSON type the schema does not accept, or null when it accepts every type. */
  wrongType(schema: Schema): unknown[] | null {
    const accepted = this.types(schema);
    if (!accepted) return null;
    const candidates: [string, unknown][] = [
      ["string", "maybe"],
      ["number", 12345],
      ["boolean", true],
      ["object", { nested: { deeper: 1 } }],
      ["array", ["x", 1]],
      ["null", null],
    ];
    const wrong = candidates.filter(([t]) => !accepted.has(t)).map(([, v]) => v);
    return wrong.length ? wrong : null;
  }

  /** Rule-breaking values for one schema (not containers): wrong types, null, too long, out of range, not an integer. */
  breaking(schema: Schema): Mutated[] {
    const s = this.deref(schema);
    const out: Mutated[] = (this.wrongType(s) ?? []).map((value) => ({ value, why: `wrong type ${value === null ? "null" : Array.isArray(value) ? "array" : typeof value}` }));
    const types = this.types(s);
    if (types && types.size === 1) {
      if (types.has("string") && s.maxLength !== undefined) out.push({ value: "x".repeat(Math.max(s.maxLength + 1, 100_000)), why: `longer than maxLength ${s.maxLength}` });
      if (types.has("string") && s.maxLength !== undefined) out.push({ value: "y".repeat(s.maxLength + 1), why: `maxLength ${s.maxLength} + 1` });
      if (types.has("string") && s.minLength) out.push({ value: "", why: `shorter than minLength ${s.minLength}` });
      if (types.has("string") && s.format === "date-time") out.push({ value: "+275760-09-14T00:00:00Z", why: "date beyond the ISO range" }, { value: "2026-13-45T25:61:00Z", why: "impossible date" });
    }
    if (types && !types.has("string") && types.has("number")) {
      const integer = (Array.isArray(s.type) ? s.type : [s.type]).includes("integer");
      if (integer) out.push({ value: 1.5, why: "not an integer" }, { value: 2 ** 53 + 2, why: "beyond safe integers" });
      if (s.minimum !== undefined) out.push({ value: s.minimum - 1, why: `below minimum ${s.minimum}` });
      if (s.exclusiveMinimum !== undefined) out.push({ value: s.exclusiveMinimum, why: `not above ${s.exclusiveMinimum}` });
      if (s.maximum !== undefined) out.push({ value: s.maximum + 1, why: `above maximum ${s.maximum}` });
    }
    if (types && !types.has("array") && !types.has("object")) out.push({ value: deepNest(2000), why: "deeply nested array" });
    return out;
  }

  /** Mutations of a valid object value that break a rule of its schema; recursive into object-valued properties. */
  mutations(schema: Schema, value: unknown, path = ""): Mutated[] {
    const s = this.deref(schema);
    if (!isRecord(value) || this.types(s)?.has("object") !== true || s.anyOf || s.oneOf) return [];
    const props: Record<string, Schema> = s.properties ?? {};
    const out: Mutated[] = [];
    if (s.additionalProperties === undefined || s.additionalProperties === false) out.push({ value: { ...value, fuzz_extra_field: 1 }, why: `unknown field ${path}fuzz_extra_field` });
    for (const r of s.required ?? []) {
      if (r in value) out.push({ value: omit(value, r), why: `missing required ${path}${r}` });
    }
    for (const [k, ps] of Object.entries(props)) {
      for (const m of this.breaking(ps)) out.push({ value: { ...value, [k]: m.value }, why: `${path}${k}: ${m.why}` });
      const inner = value[k];
      if (isRecord(inner)) for (const m of this.mutations(ps, inner, `${path}${k}.`)) out.push({ value: { ...value, [k]: m.value }, why: m.why });
      const items = this.deref(ps).items;
      if (Array.isArray(inner) && inner.length && items) {
        for (const m of this.breaking(items)) out.push({ value: { ...value, [k]: [m.value, ...inner.slice(1)] }, why: `${path}${k}.0: ${m.why}` });
        if (isRecord(inner[0])) for (const m of this.mutations(items, inner[0], `${path}${k}.0.`)) out.push({ value: { ...value, [k]: [m.value, ...inner.slice(1)] }, why: m.why });
      }
    }
    return out;
  }
}

export const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function omit(value: Record<string, unknown>, key: string) {
  const { [key]: _dropped, ...rest } = value;
  return rest;
}

export function deepNest(depth: number): unknown {
  let v: unknown = [];
  for (let i = 0; i < depth; i++) v = [v];
  return v;
}

/** `q` filters that must be refused (422): malformed JSON, unknown fields or operators, wrong shapes. */
export const BAD_Q = [
  "{",
  "not json",
  '{"filters": [{"name": "fuzz_no_such_field", "op": "==", "val": 1}]}',
  '{"filters": [{"name": "id", "op": "fuzz_op", "val": 1}]}',
  '{"filters": "id"}',
  '{"filters": [42]}',
  '{"order_by": [{"field": "id; DROP TABLE users", "direction": "asc"}]}',
  '{"order_by": [{"field": "id", "direction": "sideways"}]}',
  '{"filters": [{"name": "id", "op": "==", "field": "fuzz_no_such_field"}]}',
  '{"limit": -1}',
  '{"limit": "all"}',
  '{"filters": [{"or": "x"}]}',
  '{"filters": [{"name": "id", "op": "in", "val": 7}]}',
  "x".repeat(20_001),
];

/** `q` filters that are hostile but well-formed: the answer may be anything but a 5xx. */
export const HOSTILE_Q = [
  '{"filters": [{"name": "id", "op": "==", "val": "1\' OR \'1\'=\'1"}]}',
  '{"filters": [{"name": "id", "op": "like", "val": "%%%_"}]}',
  '{"filters": [{"name": "id", "op": "in", "val": [' + Array.from({ length: 3000 }, (_, i) => i).join(",") + "]}]}",
  '{"filters": [{"name": "id", "op": ">", "val": 1e308}]}',
  '{"filters": [{"name": "id", "op": "==", "val": null}]}',
  '{"filters": [{"name": "id", "op": "==", "val": {"nested": [1]}}]}',
  '{"filters": [{"name": "id", "op": "is_null"}], "single": true}',
  '{"order_by": [{"field": "id", "direction": "desc"}], "limit": 1000000000, "offset": 9007199254740993}',
  JSON.stringify({ filters: [nestFilter(300)] }),
  '{"filters": [{"name": "id", "op": ">", "val": "\\u0000"}]}',
];

function nestFilter(depth: number): unknown {
  let f: unknown = { name: "id", op: ">", val: 0 };
  for (let i = 0; i < depth; i++) f = i % 2 ? { or: [f] } : { and: [f] };
  return f;
}

/** FTS5 search expressions that would break a naive MATCH: never a 5xx. */
export const HOSTILE_FTS = ['"', '"unterminated', "NEAR(a b", "*", "a AND", "OR", "col:foo", "^x", "(((", "-", "'", "\\", 'a"b', "x".repeat(500), "NOT NOT", "a:*", "{a b}", "\u0000"];
