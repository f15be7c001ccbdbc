/**
 * Derives the JSON Schema a model is shown from a tool's zod input schema. Its own module
 * because zod's generator is large: it loads only when a tool has no precomputed
 * `inputJsonSchema` (see `prepareToolSpecs` in tools.ts).
 */
import * as z from "zod/mini";
import type { ToolInputSchema } from "./tools.js";

/**
 * zod 4 `toJSONSchema` of the input side (a key with a default is optional), unrepresentable
 * parts as `{}`, without `$schema` (draft 2020-12, which every provider API here accepts).
 */
export function inputJsonSchema(schema: ToolInputSchema): Record<string, unknown> {
  const out = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as Record<string, unknown>;
  delete out.$schema;
  return out;
}
