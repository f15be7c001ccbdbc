/**
 * `sessions-jsonl`: the default session store (LARIK-REFERENCE §7). Registering costs nothing:
 * the store's code loads on the first create/open/list/fork.
 */
import { definePlugin, type SessionStore } from "../../kernel/index.js";
import type { JsonlStoreOptions } from "./store.js";

export type { JsonlStoreOptions } from "./store.js";

/** A store whose implementation is imported on first use. */
export function lazyJsonlStore(opts: JsonlStoreOptions): SessionStore {
  let store: Promise<SessionStore> | undefined;
  const get = () => (store ??= import("./store.js").then((m) => new m.JsonlSessionStore(opts)));
  return {
    name: "jsonl",
    create: async (meta) => (await get()).create(meta),
    open: async (cwd, id) => (await get()).open(cwd, id),
    list: async (cwd) => (await get()).list(cwd),
    fork: async (cwd, id, keep) => (await get()).fork(cwd, id, keep),
  };
}

export default definePlugin({
  name: "sessions-jsonl",
  description: "Stores sessions as append-only JSONL files under the data directory",
  setup(ctx) {
    ctx.sessionStores.register(lazyJsonlStore({ env: ctx.host.env }));
  },
});
