/**
 * marked-terminal 7.3 ships no types and `@types/marked-terminal` pins `marked <12`
 * (STACK.md gotcha 13), so the one function we call is declared here.
 */
declare module "marked-terminal" {
  import type { MarkedExtension } from "marked";
  /** Renderer options (`width`, `reflowText`, `showSectionPrefix`, `tab`, `emoji`, styles ...). */
  export function markedTerminal(options?: Record<string, unknown>, highlightOptions?: Record<string, unknown>): MarkedExtension;
}
