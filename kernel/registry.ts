/**
 * A named registry: plugins register values, every registration returns a disposer, and the
 * host can list or look up what is registered. Later registrations of the same name shadow
 * earlier ones until disposed (a preset's plugin can be overridden by a config plugin).
 */

/** Undoes one registration. Calling it twice is harmless. */
export type Disposer = () => void;

/** Anything a registry holds: looked up by `name`. */
export interface Named {
  name: string;
}

/** One registry (`host.tools`, `host.providers`, …). */
export class Registry<T extends Named> {
  readonly #entries: { value: T; owner: string }[] = [];
  /**
   * The registry's name as plugins reach it (`tools` for `ctx.tools`), for the error of a bad
   * registration: `ctx.sandboxes.register(…): …`.
   */
  readonly kind: string;
  constructor(kind: string) {
    this.kind = kind;
  }

  /**
   * Adds `value`; the newest registration of a name wins. `owner` is the plugin name.
   * @throws TypeError when `value` has no name (not an object, or `name` not a non-empty string):
   *   everything here is looked up by name, and a nameless entry would fail later, far from the
   *   plugin that registered it.
   */
  register(value: T, owner = "host"): Disposer {
    const name = typeof value === "object" && value !== null ? (value as { name?: unknown }).name : undefined;
    if (typeof name !== "string" || !name) {
      const got = typeof value !== "object" || value === null ? (value === null ? "null" : typeof value) : `name ${JSON.stringify(name) ?? "undefined"}`;
      throw new TypeError(`ctx.${this.kind}.register(…): the value needs a name (a non-empty string), got ${got}`);
    }
    const entry = { value, owner };
    this.#entries.push(entry);
    return () => {
      const i = this.#entries.indexOf(entry);
      if (i >= 0) this.#entries.splice(i, 1);
    };
  }

  /** The newest value registered under `name`. */
  get(name: string): T | undefined {
    return this.#newest(name)?.value;
  }

  /** The plugin that registered the value now in force under `name`. */
  ownerOf(name: string): string | undefined {
    return this.#newest(name)?.owner;
  }

  #newest(name: string): { value: T; owner: string } | undefined {
    return this.#entries.findLast((e) => e.value.name === name);
  }

  /** Every name's value in force, in registration order of first appearance. */
  list(): T[] {
    const seen = new Map<string, T>();
    for (const e of this.#entries) if (!seen.has(e.value.name)) seen.set(e.value.name, e.value);
    return [...seen.keys()].map((k) => this.get(k)!);
  }

  /** All registrations with their owners (for `--help` and diagnostics). */
  entries(): { value: T; owner: string }[] {
    return [...this.#entries];
  }
}
