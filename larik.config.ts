// This repository's own Larik config: it shows the format. A project's config runs only after
// `larik config approve` (it is code from whoever wrote the repository).
import { defineConfig } from "./kernel/index.js";

export default defineConfig({
  // plugins added after the default preset: a value, a module path or a package name
  plugins: ["./examples/word-count-plugin.ts"],
  // plugins of the preset to leave out, by name
  disable: [],
  // any settings key of docs/config.md
  max_turns: 100,
});
