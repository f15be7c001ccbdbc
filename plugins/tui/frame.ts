/**
 * The rendering discipline of the live region (LARIK-REFERENCE §24, issue 6 "Rendering
 * discipline"):
 *
 * - {@link FrameScheduler} coalesces agent events into at most one UI update per frame
 *   (~30 per second). It holds a timer only while an update is pending, so an idle UI has no
 *   timers at all.
 * - {@link hardWrap} (the composer) and {@link tailRows} (a reply or its thinking as it streams)
 *   make the live region's height exact: text is wrapped here (ANSI-aware, by terminal cell
 *   width) and rendered without further wrapping, so the region can be kept below the screen
 *   height. Ink 6.8 clears the screen and reprints the whole transcript once its output reaches
 *   the terminal height; keeping the live region shorter than the screen is what keeps finished
 *   output from being redrawn.
 * - Synchronized output: Ink 6.8 already brackets each frame with `CSI ? 2026 h` / `l` when
 *   stdout is a TTY outside CI (`ink/build/write-synchronized.js`); {@link syncOutput} wraps
 *   the few writes the TUI makes outside Ink (the exit line, OSC 52) the same way.
 */
import stringWidth from "string-width";
import wrapAnsi from "wrap-ansi";

/** Frames per second the TUI renders at most (Ink's `maxFps` and our event coalescing). */
const MAX_FPS = 30;
/** Minimum time between two coalesced updates, in ms. */
const FRAME_MS = Math.ceil(1000 / MAX_FPS);

/**
 * Ink render options of every TUI screen: frames capped at {@link MAX_FPS}. Ink 6.8's
 * `incrementalRendering` (rewrite only changed rows) would halve the bytes per streamed token,
 * but in tmux it left stale rows behind when the live region shrank (closing the palette), so
 * each frame rewrites the whole live region, which is kept small instead.
 */
export const INK_OPTIONS = { maxFps: MAX_FPS, incrementalRendering: false } as const;

/** Begin/end synchronized update (DEC private mode 2026; terminals without it ignore both). */
export const BSU = "\x1b[?2026h";
export const ESU = "\x1b[?2026l";

/** Whether synchronized-output codes are worth sending to `stream` (a TTY outside CI, as Ink decides). */
function supportsSyncOutput(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): boolean {
  // the same test as Ink's is-in-ci
  const set = (k: string) => k in env && env[k] !== "0" && env[k] !== "false";
  const ci = set("CI") || set("CONTINUOUS_INTEGRATION");
  return stream.isTTY === true && !ci;
}

/** `text` wrapped in BSU/ESU when the stream supports it. */
export function syncOutput(text: string, stream: { isTTY?: boolean }, env?: NodeJS.ProcessEnv): string {
  return supportsSyncOutput(stream, env) ? `${BSU}${text}${ESU}` : text;
}

/**
 * Runs `flush` at most once per {@link FRAME_MS}. `request()` is cheap to call per event; the
 * first request after a quiet period flushes on the next macrotask, later ones within the frame
 * are merged. No timer exists while nothing is pending.
 */
export class FrameScheduler {
  #timer: NodeJS.Timeout | undefined;
  #last = -Infinity;
  #frames = 0;
  constructor(
    private readonly flush: () => void,
    private readonly frameMs = FRAME_MS,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Asks for a flush within one frame. */
  request(): void {
    if (this.#timer) return;
    const wait = Math.max(0, this.frameMs - (this.now() - this.#last));
    this.#timer = setTimeout(() => this.#run(), wait);
  }

  /** Flushes now (keystrokes: the composer must not lag), cancelling a pending flush. */
  immediate(): void {
    if (this.#timer) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    this.#run();
  }

  /** True while a flush is scheduled (a timer exists). */
  get pending(): boolean {
    return this.#timer !== undefined;
  }

  /** Flushes done so far. */
  get frames(): number {
    return this.#frames;
  }

  /** Drops a pending flush (shutdown). */
  cancel(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #run(): void {
    this.#timer = undefined;
    this.#last = this.now();
    this.#frames++;
    this.flush();
  }
}

// SGR sequences carry colour across a wrap; other escapes (OSC links, cursor moves) are kept
// as zero-width text and never split.
const ESCAPE = /\x1b(?:\[[0-9;:?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])/y;
const SGR_RESET = "\x1b[0m";
const segmenter = new Intl.Segmenter();

/**
 * Splits `text` into rows of at most `cols` terminal cells, breaking long lines at grapheme
 * boundaries (hard wrap, as a terminal would). ANSI escapes take no width; SGR colour active at
 * a break is closed at the end of the row and reopened on the next, so every row renders alone.
 * Tabs count as 4 cells. Returns at least one row.
 */
export function hardWrap(text: string, cols: number): string[] {
  const width = Math.max(1, Math.floor(cols));
  const rows: string[] = [];
  for (const line of text.replace(/\r\n?/g, "\n").split("\n")) {
    let row = "";
    let used = 0;
    let active = "";
    let i = 0;
    while (i < line.length) {
      if (line.charCodeAt(i) === 0x1b) {
        ESCAPE.lastIndex = i;
        const m = ESCAPE.exec(line);
        if (m) {
          const seq = m[0];
          row += seq;
          if (seq.endsWith("m") && seq.startsWith("\x1b[")) active = seq === SGR_RESET || seq === "\x1b[m" ? "" : active + seq;
          i += seq.length;
          continue;
        }
      }
      // one grapheme at a time, up to the next escape
      const next = line.indexOf("\x1b", i + 1);
      const chunk = line.slice(i, next === -1 ? line.length : next);
      for (const { segment } of segmenter.segment(chunk)) {
        const g = segment === "\t" ? "    " : segment;
        const w = segment === "\t" ? 4 : stringWidth(g);
        if (used + w > width && used > 0) {
          rows.push(active ? row + SGR_RESET : row);
          row = active;
          used = 0;
        }
        row += g;
        used += w;
      }
      i += chunk.length;
    }
    rows.push(active ? row + SGR_RESET : row);
  }
  return rows;
}

/**
 * `text` in rows of at most `cols` cells, broken between words where it can be and inside a word
 * longer than a row, exactly as Ink wraps the transcript's text (wrap-ansi, `hard`, untrimmed):
 * a paragraph that streamed in the live region keeps its line breaks when it moves to the
 * transcript. Tabs count as 4 cells, as in {@link hardWrap}. Returns at least one row.
 */
export function wordWrap(text: string, cols: number): string[] {
  return wrapAnsi(text.replace(/\r\n?/g, "\n").replace(/\t/g, "    "), Math.max(1, Math.floor(cols)), { hard: true, trim: false }).split("\n");
}

/**
 * The last `max` rows of `text` word-wrapped at `cols` ({@link wordWrap}), and how many rows were
 * cut above. `max` of 0 gives no rows. The cost is linear in `text`, which is only ever the
 * unfinished tail of a reply (finished paragraphs have already gone to the transcript).
 */
export function tailRows(text: string, cols: number, max: number): { rows: string[]; hidden: number } {
  if (max <= 0) return { rows: [], hidden: text ? wordWrap(text, cols).length : 0 };
  const all = wordWrap(text, cols);
  if (all.length <= max) return { rows: all, hidden: 0 };
  return { rows: all.slice(all.length - max), hidden: all.length - max };
}
