#!/usr/bin/env node
/**
 * The `larik` command. `--version` without any config file is answered before anything else
 * loads, so it costs little more than starting node; everything else is in `cli/main.ts`,
 * imported on demand.
 */
import { fastVersion } from "./cli/version.js";

process.env.NODE_ENV ??= "production"; // ink loads React's development build otherwise
const argv = process.argv.slice(2);
const quick = fastVersion(argv);
if (quick !== undefined) {
  process.stdout.write(quick);
} else {
  const { main } = await import("./cli/main.js");
  process.exitCode = await main(argv);
}
