/**
 * JSON Schema (draft 2020-12 subset, as tools declare their input) → the OpenAPI 3.0 schema
 * subset Gemini's `functionDeclarations[].parameters` accepts (ai.google.dev/api/caching#Schema).
 * Keys outside that subset (`$schema`, `additionalProperties`, `$ref`, `const`, …) have been
 * answered with 400 "Unknown name …" (WIRE-FORMATS §4.2), so only known keys are kept.
 */

const KEEP = new Set([
  "type",
  "format",
  "title",
  "description",
  "nullable",
  "enum",
  "maxItems",
  "minItems",
  "minProperties",
  "maxProperties",
  "minLength",
  "maxLength",
  "pattern",
  "example",
  "default",
  "minimum",
  "maximum",
  "propertyOrdering",
]);

/** Formats Gemini accepts per type; others are answered with a 400. */
const FORMATS: Record<string, ReadonlySet<string>> = {
  string: new Set(["enum", "date-time"]),
  integer: new Set(["int32", "int64"]),
  number: new Set(["float", "double"]),
};

type Schema = Record<string, unknown>;

/**
 * Converts one tool input schema. `$ref`s into `$defs`/`definitions` are inlined (a recursive one
 * becomes a plain object), `type: [T, "null"]` becomes `type: T, nullable: true`, `const` an
 * `enum`, `oneOf` an `anyOf`; enums keep only string values; `required` keeps only declared
 * properties. Returns undefined for an object schema without properties, which Gemini rejects
 * ("properties: should be non-empty for OBJECT type"): the declaration then has no `parameters`.
 */
export function toGeminiSchema(schema: Record<string, unknown>): Schema | undefined {
  const defs = { ...(schema.definitions as Schema | undefined), ...(schema.$defs as Schema | undefined) };
  const out = convert(schema, defs, new Set());
  if (out.type === "object" && !out.properties) return undefined;
  return out;
}

function convert(input: unknown, defs: Schema, seen: Set<string>): Schema {
  if (!input || typeof input !== "object" || Array.isArray(input)) return {};
  let s = input as Schema;
  if (typeof s.$ref === "string") {
    const name = /^#\/(?:\$defs|definitions)\/(.+)$/.exec(s.$ref)?.[1];
    if (!name || seen.has(name) || !defs[name]) return { type: "object", ...(typeof s.description === "string" ? { description: s.description } : {}) };
    const target = defs[name] as Schema;
    return convert({ ...target, ...Object.fromEntries(Object.entries(s).filter(([k]) => k !== "$ref")) }, defs, new Set([...seen, name]));
  }
  if (Array.isArray(s.allOf) && s.allOf.length === 1) s = { ...(s.allOf[0] as Schema), ...Object.fromEntries(Object.entries(s).filter(([k]) => k !== "allOf")) };
  const out: Schema = {};
  for (const [k, v] of Object.entries(s)) if (KEEP.has(k)) out[k] = v;
  if (Array.isArray(s.type)) {
    const types = s.type.filter((t) => t !== "null");
    if (types.length !== s.type.length) out.nullable = true;
    if (types.length === 1) out.type = types[0];
    else {
      delete out.type;
      if (types.length > 1) out.anyOf = types.map((t) => ({ type: t }));
    }
  }
  if (s.const !== undefined && typeof s.const === "string") out.enum = [s.const];
  if (Array.isArray(out.enum)) {
    if (out.enum.every((e) => typeof e === "string")) out.type ??= "string";
    else delete out.enum;
  }
  if (typeof out.format === "string") {
    const ok = FORMATS[String(out.type)];
    if (!ok?.has(out.format)) delete out.format;
  }
  if (s.properties && typeof s.properties === "object") {
    const props: Schema = {};
    for (const [k, v] of Object.entries(s.properties as Schema)) props[k] = convert(v, defs, seen);
    if (Object.keys(props).length) out.properties = props;
    out.type ??= "object";
  }
  if (Array.isArray(s.required)) {
    const names = Object.keys((out.properties as Schema | undefined) ?? {});
    const req = s.required.filter((r): r is string => typeof r === "string" && names.includes(r));
    if (req.length) out.required = req;
  }
  if (s.items !== undefined) out.items = convert(Array.isArray(s.items) ? s.items[0] : s.items, defs, seen);
  else if (out.type === "array" && Array.isArray(s.prefixItems) && s.prefixItems.length) out.items = convert(s.prefixItems[0], defs, seen);
  const alts = Array.isArray(s.anyOf) ? s.anyOf : Array.isArray(s.oneOf) ? s.oneOf : undefined;
  if (alts) {
    const nonNull = alts.filter((a) => !(a && typeof a === "object" && (a as Schema).type === "null"));
    if (nonNull.length !== alts.length) out.nullable = true;
    if (nonNull.length === 1) Object.assign(out, convert(nonNull[0], defs, seen), out.nullable ? { nullable: true } : {});
    else if (nonNull.length > 1) out.anyOf = nonNull.map((a) => convert(a, defs, seen));
  }
  return out;
}
