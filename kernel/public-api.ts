/**
 * The kernel's public module as a value: what `import … from "larik"` gives a config file and
 * the plugins it loads (kernel/config-files.ts hands it to jiti), so that they share the running
 * kernel. Its own module because the headless build replaces it: an `import * as` used as a
 * value makes esbuild build the namespace object of ~160 getters when the bundle starts, which a
 * `-p` run without a config file never uses (tsup.config.ts, `kernelModuleOnDemand`).
 */
import * as kernel from "./index.js";

/** The kernel's public exports (kernel/index.ts), as one object. */
export function kernelModule(): typeof kernel {
  return kernel;
}
