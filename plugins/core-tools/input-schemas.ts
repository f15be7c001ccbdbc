/**
 * The JSON Schemas the model is shown for the core tools' inputs, generated from their zod
 * schemas into `input-schemas.json`: deriving them at every start-up costs ~10 ms
 * (bench/startup.mjs). `input-schemas.test.ts` fails when a zod schema and its JSON drift apart;
 * `UPDATE_TOOL_SCHEMAS=1 npx vitest run plugins/core-tools/input-schemas.test.ts` rewrites it.
 */
import schemas from "./input-schemas.json" with { type: "json" };

/** Tool name → JSON Schema of its input (zod 4 `toJSONSchema`, input side, no `$schema`). */
export const INPUT_SCHEMAS: Readonly<Record<keyof typeof schemas, Record<string, unknown>>> = schemas;
