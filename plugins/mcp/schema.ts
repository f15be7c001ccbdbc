/**
 * MCP input schemas, made acceptable to every provider and enforced before the permission check
 * (LARIK-REFERENCE §15 "Inputs validated against the server's inputSchema before permission").
 *
 * Two schemas per tool: the *advertised* one, normalized for providers that reject `$ref`,
 * `$defs` and nullable unions (Gemini's OpenAPI subset, OpenAI's root-must-be-object rule;
 * WIRE-FORMATS tool sections), and the server's *original* one, which validates the arguments.
 */
// Classic zod (zod/mini has no `fromJSONSchema`), loaded only once a server connects. Named
// imports, not the `z` namespace: using `z` as a value makes the bundle keep every export of zod,
// all ~50 locales among them, in the chunk start-up shares with zod/mini.
import { fromJSONSchema, unknown, type ZodType } from "zod";

type Json = Record<string, unknown>;

const isObj = (v: unknown): v is Json => !!v && typeof v === "object" && !Array.isArray(v);

/** How deep `$ref`s are inlined before a recursive reference is cut to `{type:"object"}`. */
const MAX_REF_DEPTH = 8;

function lookup(root: Json, ref: string): unknown {
  if (ref === "#") return root;
  if (!ref.startsWith("#/")) return undefined;
  let cur: unknown = root;
  for (const raw of ref.slice(2).split("/")) {
    const key = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
    if (!isObj(cur) && !Array.isArray(cur)) return undefined;
    cur = (cur as Json)[key];
  }
  return cur;
}

const isNullSchema = (s: unknown) => isObj(s) && (s.type === "null" || (Array.isArray(s.type) && s.type.length === 1 && s.type[0] === "null"));

/**
 * Returns a provider-safe copy of a JSON Schema used as tool input:
 * - local `$ref`s (`#/$defs/…`, `#/definitions/…`, `#`) are inlined; a reference still open
 *   `MAX_REF_DEPTH` levels down (a recursive type) becomes `{type:"object"}`; remote refs too;
 * - `$defs`, `definitions`, `$schema`, `$id`, `id` and `$comment` are dropped;
 * - `anyOf`/`oneOf` with a `null` branch lose it, and a single remaining branch is merged in;
 *   `type: [T, "null"]` becomes `type: T`;
 * - the root is `type: "object"` with `properties` and a `required` limited to known properties.
 * The input is not modified.
 */
export function normalizeSchema(input: unknown): Json {
  const root: Json = isObj(input) ? input : {};
  const walk = (node: unknown, refs: string[]): unknown => {
    if (Array.isArray(node)) return node.map((n) => walk(n, refs));
    if (!isObj(node)) return node;
    let s: Json = node;
    if (typeof s.$ref === "string") {
      const ref = s.$ref;
      const target = refs.includes(ref) || refs.length >= MAX_REF_DEPTH ? undefined : lookup(root, ref);
      const { $ref: _drop, ...rest } = s;
      if (!isObj(target)) return { type: "object", ...strip(rest) };
      // Sibling keywords (a description next to the $ref) win over the target's.
      return walk({ ...target, ...rest }, [...refs, ref]);
    }
    s = strip(s);
    const out: Json = {};
    for (const [k, v] of Object.entries(s)) {
      if (k === "properties" || k === "patternProperties" || k === "dependentSchemas") {
        out[k] = isObj(v) ? Object.fromEntries(Object.entries(v).map(([p, ps]) => [p, walk(ps, refs)])) : v;
      } else if (["items", "additionalProperties", "not", "contains", "propertyNames", "if", "then", "else", "unevaluatedProperties"].includes(k)) {
        out[k] = isObj(v) || Array.isArray(v) ? walk(v, refs) : v;
      } else if (k === "anyOf" || k === "oneOf" || k === "allOf" || k === "prefixItems") {
        out[k] = Array.isArray(v) ? v.map((b) => walk(b, refs)) : v;
      } else out[k] = v;
    }
    return collapseNull(out);
  };
  const result = walk(root, []) as Json;
  return objectRoot(result);
}

function strip(s: Json): Json {
  const { $defs: _a, definitions: _b, $schema: _c, $id: _d, id: _e, $comment: _f, ...rest } = s;
  return rest;
}

function collapseNull(s: Json): Json {
  if (Array.isArray(s.type)) {
    const types = s.type.filter((t) => t !== "null");
    if (types.length === 1) s.type = types[0];
    else if (types.length > 1) s.type = types;
  }
  for (const key of ["anyOf", "oneOf"] as const) {
    const branches = s[key];
    if (!Array.isArray(branches)) continue;
    const rest = branches.filter((b) => !isNullSchema(b));
    if (rest.length === branches.length || rest.length === 0) continue;
    if (rest.length === 1 && isObj(rest[0])) {
      const { [key]: _drop, ...others } = s;
      // The outer description and default describe the field; keep them over the branch's.
      return collapseNull({ ...rest[0], ...others });
    }
    s[key] = rest;
  }
  return s;
}

function objectRoot(s: Json): Json {
  const out: Json = { ...s, type: "object" };
  if (!isObj(out.properties)) out.properties = {};
  if (Array.isArray(out.required)) {
    const props = out.properties as Json;
    const req = (out.required as unknown[]).filter((r): r is string => typeof r === "string" && r in props);
    if (req.length) out.required = [...new Set(req)];
    else delete out.required;
  }
  return out;
}

/** Which validator enforces a tool's input schema. */
export type ValidatorKind = "zod" | "ajv" | "none";

/**
 * A validator of the server's original schema. zod 4's `fromJSONSchema` is used when it can
 * represent the schema (it handles `$ref`, recursion, unions); schemas it refuses (`not`,
 * conditionals) fall back to Ajv through the SDK's `AjvJsonSchemaValidator`, the validator the
 * SDK itself uses for tool output; a schema neither can compile is not enforced (`"none"`).
 */
export async function buildValidator(original: unknown): Promise<{ kind: ValidatorKind; check(v: unknown): { path: PropertyKey[]; message: string }[] }> {
  // `$defs` stay for ref resolution; `$schema` goes because either validator may not know the
  // draft it names (the SDK's own servers send draft-07, others 2020-12).
  const schema: Json = isObj(original) ? { ...original } : { type: "object" };
  delete schema.$schema;
  try {
    const zs = fromJSONSchema(schema as never);
    return {
      kind: "zod",
      check: (v) => {
        const r = zs.safeParse(v);
        return r.success ? [] : r.error.issues.map((i) => ({ path: i.path, message: i.message }));
      },
    };
  } catch {
    // not representable in zod: try Ajv
  }
  try {
    const { AjvJsonSchemaValidator } = await import("@modelcontextprotocol/sdk/validation/ajv");
    const validate = new AjvJsonSchemaValidator().getValidator(schema as never);
    return {
      kind: "ajv",
      check: (v) => {
        const r = validate(v);
        return r.valid ? [] : [{ path: [], message: r.errorMessage ?? "does not match the tool's input schema" }];
      },
    };
  } catch {
    return { kind: "none", check: () => [] };
  }
}

/**
 * The zod input of an MCP tool: validation by `check` (issues keep their paths, so the kernel's
 * `INVALID_ARGUMENTS` line names the field), advertised as exactly `advertised`. zod's
 * `toJSONSchema` merges registered metadata into the output, and an unconstrained `unknown()`
 * contributes nothing of its own, so `toolSpec` renders the normalized schema byte for byte.
 * Parsing returns the arguments unchanged (the server applies its own defaults).
 */
export function toolInput(advertised: Json, check: (v: unknown) => { path: PropertyKey[]; message: string }[]): ZodType<Record<string, unknown>> {
  const base = unknown().superRefine((value, ctx) => {
    if (!isObj(value)) {
      ctx.addIssue({ code: "custom", message: "expected an object of arguments" });
      return;
    }
    for (const issue of check(value)) ctx.addIssue({ code: "custom", message: issue.message, path: issue.path });
  });
  // `.meta()` returns a copy carrying the metadata: return that copy.
  return base.meta(advertised) as unknown as ZodType<Record<string, unknown>>;
}
