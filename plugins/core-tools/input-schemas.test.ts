import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { toolSpec } from "../../kernel/index.js";
import { coreTools } from "./index.js";
import { BackgroundShells } from "./shells.js";

const FILE = join(import.meta.dirname, "input-schemas.json");

describe("precomputed input schemas", () => {
  it("equal what zod derives from each core tool's input schema", async () => {
    const tools = coreTools(() => new BackgroundShells());
    // the same tools without their stored schema make the kernel derive one from zod
    const bare = tools.map((t) => ({ ...t, inputJsonSchema: undefined }));
    const derived = Object.fromEntries(bare.map((t) => [t.name, toolSpec(t).input_schema]));
    if (process.env.UPDATE_TOOL_SCHEMAS) await writeFile(FILE, `${JSON.stringify(derived, null, 2)}\n`);
    const stored = JSON.parse(await readFile(FILE, "utf8")) as Record<string, unknown>;
    expect(Object.keys(stored).sort()).toEqual(Object.keys(derived).sort());
    for (const t of tools) {
      expect(t.inputJsonSchema, `${t.name}: run UPDATE_TOOL_SCHEMAS=1 npx vitest run ${FILE}`).toEqual(derived[t.name]);
    }
  });
});
