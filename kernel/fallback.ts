/**
 * Fallback models with cooldowns (LARIK-REFERENCE §10 "Fallbacks", invariants 11 and 12): a
 * {@link Provider} that tries its candidates in order and switches to the next one only while
 * nothing of the answer reached the user.
 *
 * Config: `fallbacks: { "<role or spec>": ["provider/model", …] }`, looked up by the role name
 * the user wrote first, then by the resolved `provider/model` spec.
 */
import type { Settings } from "./config.js";
import { defaultSpec, resolveModel, type ResolvedModel } from "./models.js";
import { ConfigError, oneLine } from "./kit/one-line.js";
import type { ProviderFactory } from "./registries.js";
import type { Registry } from "./registry.js";
import { ProviderError, type Message, type ModelRequest, type Provider, type ProviderErrorKind, type StreamEvent } from "./types.js";

/** One model to try: its `provider/model` spec and a ready provider for it. */
export interface FallbackCandidate {
  /** `provider/model` (everything after the first `/` is the model id). */
  spec: string;
  provider: Provider;
  /** The model's output cap (tokens): a larger `max_tokens` is lowered to it for this candidate. */
  max_output?: number;
  /** How errors name it ({@link providerWho}); default `provider "<name>"`. */
  who?: string;
}

/** Tuning and test seams. */
export interface FallbackOptions {
  /** Clock in ms (default `Date.now`). */
  now?: () => number;
  /** Where cooldowns are kept: `spec` → time (ms) it may be tried again. Default: process-wide. */
  cooldowns?: Map<string, number>;
}

/** Cooldown after a rate limit, an overload, a server or connection error (ms). */
export const SHORT_COOLDOWN_MS = 60_000;
/** Cooldown after any other switching failure: auth, quota, unknown model, stall (ms). */
export const LONG_COOLDOWN_MS = 600_000;

/**
 * Process-wide cooldowns keyed by `provider/model`, shared by every agent and subagent of the
 * process so a model that just failed is not hammered by each of them.
 */
export const fallbackCooldowns = new Map<string, number>();

/**
 * Error kinds that move on to the next candidate: 401/403 (`auth`), 402 and quota 429s
 * (`quota`), 404 (`not_found`), 429 (`rate_limit`), 408/409/5xx (`server`), 529 (`overloaded`),
 * an unreachable server (`network`), `stall`, and a stream cut before any output (`truncated`).
 * Never: context overflow, bad or too-large requests, capability errors (the next model would be
 * sent the same request; overflow is compacted by the loop instead).
 */
const SWITCH_ON: ReadonlySet<ProviderErrorKind> = new Set(["auth", "quota", "not_found", "rate_limit", "server", "overloaded", "network", "stall", "truncated"]);
const SHORT: ReadonlySet<ProviderErrorKind> = new Set(["rate_limit", "server", "overloaded", "network", "truncated"]);

/** Whether an error lets a fallback take over (only meaningful before any output). */
function isFallbackError(err: unknown): err is ProviderError {
  return err instanceof ProviderError && SWITCH_ON.has(err.kind);
}

/**
 * How long a candidate that failed with `err` is skipped, in ms (§10 "Fallbacks"): 1 min after a
 * rate limit, overload, server or connection error, 10 min after others; never less than the
 * server's requested wait (`retry_after_ms`).
 */
export function cooldownFor(err: ProviderError): number {
  const base = SHORT.has(err.kind) ? SHORT_COOLDOWN_MS : LONG_COOLDOWN_MS;
  return Math.max(base, err.retry_after_ms ?? 0);
}

function split(spec: string): { pname: string; model: string } {
  const i = spec.indexOf("/");
  if (i <= 0) throw new ConfigError(`fallback "${spec}" is not a provider/model spec`);
  return { pname: spec.slice(0, i), model: spec.slice(i + 1) };
}

const OUTPUT = new Set<StreamEvent["type"]>(["text_delta", "thinking_delta", "tool_use_start"]);

function reason(err: ProviderError): string {
  const status = err.status ? ` ${err.status}` : "";
  return `${err.kind.replace(/_/g, " ")}${status}`;
}

/**
 * Wraps candidates (the primary first) into one {@link Provider} named after the primary.
 *
 * - Candidates are tried in order; one still cooling down is skipped with a notice, except the
 *   last, which is always tried.
 * - A candidate failing with a {@link isFallbackError} kind before any output event
 *   (`text_delta`, `thinking_delta`, `tool_use_start`) is cooled down ({@link cooldownFor}) and
 *   the next one is tried after a `notice` naming both. Once output was yielded, or for any other
 *   error, or on the last candidate, the error is thrown as is. Notices (retry waits) pass
 *   through and do not count as output.
 * - Each candidate gets the request with its own model id, and `max_tokens` lowered to its
 *   `max_output` when larger.
 * - The final message is stamped with the model that answered: the primary's bare model id (as
 *   its adapter already does) or, for any other candidate, its full `provider/model` spec, so
 *   cost is priced for the model that answered and reasoning replays only to it. Before a
 *   candidate is asked, messages stamped with its own `provider/` prefix get the bare id back,
 *   which is what its adapter compares.
 * - `contextWindow` and `supportsTools` delegate to the primary.
 *
 * Source: LARIK-REFERENCE §10 "Fallbacks"; invariants 11 and 12.
 * @throws ConfigError when `candidates` is empty or a spec has no `provider/` head.
 */
export function withFallbacks(candidates: FallbackCandidate[], opts: FallbackOptions = {}): Provider {
  if (!candidates.length) throw new ConfigError("withFallbacks needs at least one candidate");
  const list = candidates.map((c) => ({ spec: c.spec, adapter: c.provider, max_output: c.max_output, ...split(c.spec), who: c.who }));
  const primary = list[0]!;
  const now = opts.now ?? Date.now;
  const cooldowns = opts.cooldowns ?? fallbackCooldowns;
  const cooling = (spec: string) => (cooldowns.get(spec) ?? 0) > now();

  const wrapper: Provider = {
    name: primary.adapter.name,
    async *stream(request: ModelRequest): AsyncGenerator<StreamEvent> {
      for (let i = 0; i < list.length; i++) {
        const c = list[i]!;
        const last = i === list.length - 1;
        if (!last && cooling(c.spec)) {
          yield { type: "notice", text: `skipping ${c.spec}: cooling down after a failure (${Math.ceil((cooldowns.get(c.spec)! - now()) / 1000)} s left)` };
          continue;
        }
        const req: ModelRequest = {
          ...request,
          model: c.model,
          messages: request.messages.map((m) => unstamp(m, c.pname)),
          ...(request.max_tokens !== undefined && c.max_output !== undefined && request.max_tokens > c.max_output ? { max_tokens: c.max_output } : {}),
        };
        let output = false;
        try {
          for await (const ev of streamOf(c.adapter, req, c.who ?? `provider "${c.pname}"`)) {
            if (OUTPUT.has(ev.type)) output = true;
            if (ev.type === "done") yield { ...ev, message: { ...ev.message, model: i === 0 ? c.model : c.spec } };
            else yield ev;
          }
          return;
        } catch (err) {
          if (request.signal?.aborted || output || !isFallbackError(err)) throw err;
          cooldowns.set(c.spec, now() + cooldownFor(err));
          if (last) throw err;
          const next = list.slice(i + 1).find((n, k) => i + 1 + k === list.length - 1 || !cooling(n.spec))!;
          yield { type: "notice", text: `${c.spec} failed (${reason(err)}: ${err.message}); switching to ${next.spec}` };
        }
      }
    },
  };
  if (primary.adapter.contextWindow) wrapper.contextWindow = (model) => primary.adapter.contextWindow!(model);
  if (primary.adapter.supportsTools) wrapper.supportsTools = (model) => primary.adapter.supportsTools!(model);
  return wrapper;
}

/** A message stamped `provider/model` by the wrapper, with the bare id for that provider's adapter. */
function unstamp(m: Message, pname: string): Message {
  const prefix = `${pname}/`;
  return m.model?.startsWith(prefix) ? { ...m, model: m.model.slice(prefix.length) } : m;
}

/**
 * The fallback specs configured for a model: `fallbacks[<name as written>]` (a role or a spec),
 * else `fallbacks["provider/model"]`. Empty when none.
 */
export function fallbackSpecs(settings: Settings, written: string | undefined, resolved: string): string[] {
  const map = settings.fallbacks ?? {};
  const list = (written !== undefined ? map[written] : undefined) ?? map[resolved] ?? [];
  return list.filter((s) => typeof s === "string" && s && s !== resolved && s !== written);
}

/** A model opened for an agent: the resolved primary and the provider to use (wrapped when fallbacks exist). */
export interface OpenedModel {
  resolved: ResolvedModel;
  provider: Provider;
  /** One-line notices (a fallback that could not be set up). */
  notices: string[];
}

/**
 * How errors name a provider: `provider "<name>"`, and the plugin that registered its factory
 * when that is not a plugin of the same name (`provider "acme" (plugin "acme-tools")`).
 * @param factory the registered factory's name, when a `providers.<name>` setting renames it
 */
export function providerWho(providers: Registry<ProviderFactory>, provider: string, factory: string = provider): string {
  const owner = providers.ownerOf(factory);
  return `provider "${provider}"${owner && owner !== provider ? ` (plugin "${owner}")` : ""}`;
}

/**
 * `provider.stream(request)`, checked before anyone iterates it: an `async stream()` (which
 * returns a Promise) or a `stream()` that returns nothing would otherwise fail in the caller's
 * `for await` as `….stream(...) is not a function or its return value is not async iterable`,
 * naming no one. A sync iterable (an array of events, a `function*`) is accepted, since
 * `for await` reads it as it is; a string is not.
 * @param who how the error names the provider ({@link providerWho})
 * @throws Error naming the provider and its plugin and saying what `stream()` must return.
 */
export function streamOf(provider: Provider, request: ModelRequest, who: string): AsyncIterable<StreamEvent> | Iterable<StreamEvent> {
  const out: unknown = provider.stream(request);
  if (typeof out === "object" && out !== null) {
    const o = out as { [Symbol.asyncIterator]?: unknown; [Symbol.iterator]?: unknown; then?: unknown };
    if (typeof o[Symbol.asyncIterator] === "function" || typeof o[Symbol.iterator] === "function") return out as AsyncIterable<StreamEvent>;
    // a Promise nobody reads would end the process as an unhandled rejection if it rejects
    if (typeof o.then === "function") (out as PromiseLike<unknown>).then(undefined, () => {});
  }
  throw new Error(`${who}: stream(request) must return an async iterable of StreamEvent, as an async generator does (async *stream(request) { yield … }); it returned ${describeReturn(out)}`);
}

/** What a `stream()` returned, in a few words: `a Promise`, `undefined`, `a string`, `an object with keys type, text`. */
function describeReturn(v: unknown): string {
  if (v === null || v === undefined) return String(v);
  if (typeof v !== "object") return `a ${typeof v}`;
  if (typeof (v as { then?: unknown }).then === "function") return "a Promise";
  const keys = Object.keys(v).slice(0, 5);
  return keys.length ? `an object with keys ${keys.join(", ")}` : "an object that is not iterable";
}

/**
 * Calls the factory's `create`. A plugin's provider that throws there, or returns no
 * `stream(request)`, is named with the plugin that registered it: otherwise the user reads
 * `adapter missing` or `….stream(...) is not a function` at the first prompt, naming no one.
 * A {@link ConfigError} (a bad base URL, say) is the user's to fix, and passes as it is.
 * @throws ConfigError from the factory; Error naming the provider and plugin otherwise.
 */
async function createProvider(r: ResolvedModel, providers: Registry<ProviderFactory>): Promise<Provider> {
  const who = providerWho(providers, r.provider, r.factory.name);
  let provider: Provider;
  try {
    provider = await r.factory.create(r.config);
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw new Error(`${who} failed to start: ${oneLine(err)}`, { cause: err });
  }
  if (typeof (provider as Partial<Provider> | undefined)?.stream !== "function") {
    throw new Error(`${who}: create() must return a Provider, { name, stream(request) }, got ${provider === null ? "null" : typeof provider === "object" ? "an object without stream()" : typeof provider}`);
  }
  return provider;
}

/**
 * Resolves `spec` (a spec, bare id or role; empty for the default), creates its provider and,
 * when `fallbacks` lists alternatives for it, wraps the primary and the alternatives with
 * {@link withFallbacks}. A fallback that cannot be resolved (unknown provider, missing key) is
 * left out with a notice rather than failing the primary.
 * @throws ConfigError for a bad primary spec or a missing primary key (from resolveModel).
 */
export async function openModel(
  spec: string | undefined,
  providers: Registry<ProviderFactory>,
  settings: Settings,
  env: NodeJS.ProcessEnv = process.env,
  opts: FallbackOptions = {},
): Promise<OpenedModel> {
  const written = spec || defaultSpec(settings, env);
  const resolved = resolveModel(spec, providers, settings, env);
  const primary = await createProvider(resolved, providers);
  const primarySpec = `${resolved.provider}/${resolved.model}`;
  const specs = fallbackSpecs(settings, written, primarySpec);
  if (!specs.length) return { resolved, provider: primary, notices: [] };
  const notices: string[] = [];
  const candidates: FallbackCandidate[] = [{ spec: primarySpec, provider: primary, max_output: resolved.catalog?.max_output, who: providerWho(providers, resolved.provider, resolved.factory.name) }];
  for (const s of specs) {
    try {
      const r = resolveModel(s, providers, settings, env);
      const full = `${r.provider}/${r.model}`;
      if (candidates.some((c) => c.spec === full)) continue;
      candidates.push({ spec: full, provider: await createProvider(r, providers), max_output: r.catalog?.max_output, who: providerWho(providers, r.provider, r.factory.name) });
    } catch (err) {
      notices.push(`fallback ${s} for ${written ?? primarySpec} left out: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return { resolved, provider: candidates.length > 1 ? withFallbacks(candidates, opts) : primary, notices };
}
