/**
 * zod/mini ships without messages ("Invalid input" for everything); the kernel validates with
 * zod/mini for start-up speed, and the model and the user need the real English messages.
 * Installed once, at the first validation that reports errors to someone (zod 4 `config`).
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
