/**
 * Schemas built at their first use. A module-level `z.object(…)` (or even `z.lazy(…)`) makes zod
 * load and build objects when the module is imported, which is at every start-up; `larik -p`
 * validates nothing before its first model request, and zod's set-up and the kernel's schemas
 * cost it ~4 ms there, mostly allocation (bench/startup.mjs). The headless build loads zod
 * itself on first use (tsup.config.ts, `lazyPackages`), which only helps when no schema is built at
 * import.
 */
import type * as z from "zod/mini";

/**
 * A zod 4 schema (classic or mini) that `build` makes at the first access to any of its
 * properties: a parse, or another schema reading its `_zod` internals. It stands for the built
 * schema everywhere (`schema.safeParse(x)`, `z.safeParse(schema, x)`, `z.optional(schema)`,
 * `instanceof`, `Object.keys`, methods that return `this`), like `z.lazy` but without zod. The
 * built schema's metadata in zod's global registry (`z.describe`, `.meta()`, `.describe()` inside
 * `build`) is registered for the lazy schema too, so `z.toJSONSchema` keeps descriptions.
 * `build` runs once; schemas that refer to each other must not read each other while being built
 * (zod's constructors do not), and a cycle that does throws instead of recursing forever. A lazy
 * schema cannot be frozen or made non-extensible (`Object.freeze` throws a TypeError).
 * @param build makes the schema; an error it throws reaches the access that triggered it, and the
 *   next access tries again
 * @returns a Proxy of the schema `build` returns, typed as it
 */
export function lazySchema<T extends z.core.$ZodType>(build: () => T): T {
  const pending: Pending<T> = { build, schema: undefined, building: false, proxy: undefined };
  const proxy = (pending.proxy = new Proxy(pending as Pending, handler) as unknown as T);
  lazySchemas.add(proxy);
  return proxy;
}

/** Every lazy schema made, so that one can be recognized without building it. */
const lazySchemas = new WeakSet<object>();

/**
 * True for a schema made by {@link lazySchema}, built or not. Checking anything else about it
 * (`"_zod" in schema`) would build it, which start-up avoids.
 */
export function isLazySchema(value: unknown): boolean {
  return typeof value === "object" && value !== null && lazySchemas.has(value);
}

/** The Proxy's target: the builder, then the schema it built. */
interface Pending<T = z.core.$ZodType> {
  build: () => T;
  schema: T | undefined;
  building: boolean;
  proxy: T | undefined;
}

/**
 * zod 4 keeps its global registry (metadata by schema object) on `globalThis`, so that copies of
 * the package share it; this module reads it there so as not to import zod.
 */
interface Registry {
  get(schema: object): unknown;
  add(schema: object, meta: unknown): unknown;
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
  // metadata is looked up by object, and callers hold the proxy
  const registry = (globalThis as { __zod_globalRegistry?: Registry }).__zod_globalRegistry;
  const meta = registry?.get(p.schema);
  if (meta !== undefined) registry!.add(p.proxy!, meta);
  return p.schema;
}

// One handler for all lazy schemas (a start-up makes dozens), forwarding every operation to the
// built schema, with the proxy as `this` for getters and methods (zod binds methods to the object
// they are read from). The Proxy invariants forbid reporting a property as non-configurable
// unless the target has it so, and the target is only the builder: own properties are reported
// configurable, which changes nothing for reading them. Making the proxy non-extensible is
// refused: that would freeze the builder, not the schema.
const handler: ProxyHandler<Pending> = {
  get: (p, key, receiver) => Reflect.get(built(p), key, receiver),
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
  preventExtensions: () => false,
};
