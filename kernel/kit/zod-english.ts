/**
 * zod/mini ships without messages ("Invalid input" for everything); the kernel validates with
 * zod/mini for start-up speed, and the model and the user need the real English messages.
 * Installed once, at the first validation that reports errors to someone (zod 4 `config`). Also
 * what both readers of zod issues (settings, tool arguments) need: the value an issue points at.
 */
import * as z from "zod/mini";
// The one locale, not `z.locales`: that namespace would bundle all ~50 of them into start-up.
import en from "zod/v4/locales/en.js";

let installed = false;

/** Makes zod's issue messages English (`Invalid input: expected string, received number`). */
export function useEnglishErrors(): void {
  if (installed) return;
  installed = true;
  z.config(en());
}

/** The value a zod issue's `path` names in `root`; undefined where the path leaves the objects. */
export function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let cur = root;
  for (const k of path) {
    if (cur === null || typeof cur !== "object") return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[k];
  }
  return cur;
}
