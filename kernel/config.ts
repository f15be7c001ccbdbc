/**
 * Settings and config files (LARIK-REFERENCE §26).
 * STUB: the interface is fixed; the implementation is being written.
 */
import type { Plugin } from "./plugin.js";

/** Merged, validated settings. Unknown keys are kept for plugins to read. */
export type Settings = Record<string, unknown> & {
  model?: string;
  effort?: string;
  mode?: string;
  max_turns?: number;
  permissions?: { allow?: string[]; deny?: string[] };
  providers?: Record<string, Record<string, unknown>>;
  models?: Record<string, Record<string, unknown>>;
};

/** The shape of `larik.config.ts`'s default export. */
export interface LarikConfig extends Record<string, unknown> {
  /** A preset: a list of plugins (or module paths) replacing the default preset. */
  preset?: PluginSpec[];
  /** Plugins added after the preset. */
  plugins?: PluginSpec[];
  /** Plugin names to leave out. */
  disable?: string[];
}
/** A plugin value, or a module path / package name whose default export is one. */
export type PluginSpec = Plugin | string;

/** Identity helper that types a `larik.config.ts`. */
export function defineConfig(config: LarikConfig): LarikConfig {
  return config;
}

export interface LoadedSettings {
  settings: Settings;
  /** One-line warnings (ignored shared values, skipped unapproved config). */
  notices: string[];
}

export async function loadSettings(_cwd: string, _env: NodeJS.ProcessEnv = process.env): Promise<LoadedSettings> {
  return { settings: {}, notices: [] };
}

/**
 * Reads, updates and atomically rewrites the private per-project settings file
 * (`~/.config/larik/projects/<dir>-<hash>.json`), preserving unknown keys.
 */
export async function updatePrivateProjectSettings(
  _cwd: string,
  _update: (current: Record<string, unknown>) => Record<string, unknown>,
  _env: NodeJS.ProcessEnv = process.env,
): Promise<void> {
  throw new Error("not implemented yet");
}
