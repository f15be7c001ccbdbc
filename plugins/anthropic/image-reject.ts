/**
 * Recovery from an image the Messages API refuses. The API answers an image it cannot decode with
 * HTTP 400 `invalid_request_error` `Could not process image` (no hint which image), or with a
 * path for some checks (`messages.3.content.0.content.1.image.source.base64: image exceeds 5 MB
 * maximum`, `…: The image was specified using the image/jpeg media type, but does not appear to be
 * a valid jpeg image`). The image stays in the conversation, so without a recovery every later
 * request fails the same way and the session is lost (anthropics/claude-code#56016, where Claude
 * Code now removes the image: "an image in the conversation could not be processed and was
 * removed"). request.ts already leaves out images that fail the local check (kernel/kit/images.ts);
 * this handles the ones the API refuses anyway.
 */
import { ProviderError } from "../../kernel/index.js";

const REJECTED = /could not process image|\bimage\b.*\b(does not appear to be a valid|does not match the provided media type|exceeds .*maximum|dimensions exceed)/i;
const PATH = /\bmessages\.(\d+)\.content\.(\d+)(?:\.content\.(\d+))?/;

/** True when `err` is the API refusing an image of the request. */
export function isImageRejected(err: unknown): boolean {
  return err instanceof ProviderError && err.status === 400 && err.kind === "bad_request" && REJECTED.test(err.message);
}

type ApiBlock = { type?: unknown; source?: { data?: unknown }; content?: unknown; cache_control?: unknown };

/** The note an image is replaced by: the model learns it is gone and may read the file another way. */
const REJECTED_NOTE = "[image omitted: the API could not process it]";

/**
 * Replaces refused images of a built Messages API body by {@link REJECTED_NOTE}, in place: the
 * one the error's `messages.N.content.M[.content.K]` path names, else (no path, or it names no
 * image) every image of the body, since the API does not say which one it could not process.
 * Returns the base64 data of the images replaced (empty: nothing to replace, so no resend can help).
 */
export function dropRejectedImages(body: Record<string, unknown>, err: Error): string[] {
  const messages = body.messages as { content: ApiBlock[] }[] | undefined;
  if (!Array.isArray(messages)) return [];
  const dropped: string[] = [];
  const replace = (list: ApiBlock[], i: number): void => {
    const b = list[i];
    if (b?.type !== "image") return;
    if (typeof b.source?.data === "string") dropped.push(b.source.data);
    // a cache breakpoint on the image stays where it was
    list[i] = { type: "text", text: REJECTED_NOTE, ...(b.cache_control ? { cache_control: b.cache_control } : {}) } as ApiBlock;
  };
  const m = PATH.exec(err.message);
  if (m) {
    const content = messages[Number(m[1])]?.content;
    const block = content?.[Number(m[2])];
    if (m[3] === undefined && content) replace(content, Number(m[2]));
    else if (Array.isArray(block?.content)) replace(block.content as ApiBlock[], Number(m[3]));
    if (dropped.length) return dropped;
  }
  for (const msg of messages) {
    if (!Array.isArray(msg.content)) continue;
    msg.content.forEach((b, i) => {
      if (b.type === "image") replace(msg.content, i);
      else if (b.type === "tool_result" && Array.isArray(b.content)) (b.content as ApiBlock[]).forEach((_, j) => replace(b.content as ApiBlock[], j));
    });
  }
  return dropped;
}
