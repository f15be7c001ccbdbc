/**
 * Schemas built at their first use. A module-level `z.object(…)` (or even `z.lazy(…)`) makes zod
 * load and build objects when the module is imported, which is at every start-up; `larik -p`
 * validates nothing before its first model request, and zod's set-up and the kernel's schemas
 * cost it ~4 ms there, mostly allocation (bench/startup.mjs). The headless build loads zod
 * itself on first use (tsup.config.ts, `lazyZod`), which only helps when no schema is built at
 * import.
 */
import type * as z from "zod/mini";

/**
 * A zod 4 schema (classic or mini) that `build` makes at the first access to any of its
 * properties: a parse, or another schema reading its `_zod` internals. It stands for the built
 * schema everywhere (`schema.safeParse(x)`, `z.safeParse(schema, x)`, `z.optional(schema)`,
 * `instanceof`, `Object.keys`), like `z.lazy` but without zod. `build` runs once; schemas that refer to each
 * other must not read each other while being built (zod's constructors do not), and a cycle that
 * does throws instead of recursing forever.
 * @param build makes the schema; an error it throws reaches the access that triggered it, and the
 *   next access tries again
 * @returns a Proxy of the schema `build` returns, typed as it
 */
export function lazySchema<T extends z.core.$ZodType>(build: () => T): T {
  return new Proxy({ build, schema: undefined, building: false } satisfies Pending<T> as Pending<T>, handler) as unknown as T;
}

/** The Proxy's target: the builder, then the schema it built. */
interface Pending<T = z.core.$ZodType> {
  build: () => T;
  schema: T | undefined;
  building: boolean;
}

function built(p: Pending): z.core.$ZodType {
  if (p.schema) return p.schema;
  if (p.building) throw new Error("lazySchema: a schema read itself while being built");
  p.building = true;
  try {
    p.schema = p.build();
  } finally {
    p.building = false;
  }
  return p.schema;
}

// One handler for all lazy schemas (a start-up makes dozens), forwarding every operation to the
// built schema. The Proxy invariants forbid reporting a property as non-configurable unless the
// target has it so, and the target is only the builder: own properties are reported
// configurable, which changes nothing for reading them.
const handler: ProxyHandler<Pending> = {
  get: (p, key) => Reflect.get(built(p), key),
  set: (p, key, value) => Reflect.set(built(p), key, value),
  has: (p, key) => Reflect.has(built(p), key),
  deleteProperty: (p, key) => Reflect.deleteProperty(built(p), key),
  defineProperty: (p, key, desc) => Reflect.defineProperty(built(p), key, desc),
  ownKeys: (p) => Reflect.ownKeys(built(p)),
  getOwnPropertyDescriptor: (p, key) => {
    const desc = Reflect.getOwnPropertyDescriptor(built(p), key);
    return desc && { ...desc, configurable: true };
  },
  getPrototypeOf: (p) => Reflect.getPrototypeOf(built(p)),
};
