/**
 * First-run setup against fake local servers on loopback: an Ollama (`/api/tags`) and an LM
 * Studio (`/v1/models`) speaking their real listing formats, plus keys in the environment. The
 * choice is saved to a real `config.json` in a temp XDG config dir.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { render } from "ink-testing-library";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { definePlugin, Host, resolveModel, type ProviderFactory } from "../../kernel/index.js";
import { needsSetup } from "./session-open.js";
import { Setup } from "./setup.js";
import { detectCandidates, listModels, saveChoice } from "./setup-detect.js";
import { KEY, plain, tempProject, waitFor } from "./test-kit.js";

function serve(routes: Record<string, unknown>): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const body = routes[req.url ?? ""];
    if (body === undefined) {
      res.writeHead(404).end("not found");
      return;
    }
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server })));
}

/**
 * Provider factories shaped like the real plugins' (name, key and base-URL variables, default
 * URL, API family). A plugin's tests may not import another plugin; setup only reads these.
 */
function factories(...list: ProviderFactory[]) {
  return definePlugin({ name: "test-providers", setup: (ctx) => list.forEach((f) => ctx.providers.register(f)) });
}
const unused = () => {
  throw new Error("setup never creates a provider");
};
const anthropic: ProviderFactory = { name: "anthropic", keyEnv: ["ANTHROPIC_API_KEY"], baseUrlEnv: ["ANTHROPIC_BASE_URL"], defaultBaseUrl: "https://api.anthropic.com", create: unused };
const openaiCompatible: ProviderFactory = { name: "openai-compatible", type: "openai-compatible", keyEnv: ["OPENAI_API_KEY"], baseUrlEnv: ["OPENAI_BASE_URL"], defaultBaseUrl: "https://api.openai.com/v1", create: unused };
const groq: ProviderFactory = { name: "groq", type: "openai-compatible", keyEnv: ["GROQ_API_KEY"], defaultBaseUrl: "https://api.groq.com/openai/v1", create: unused };
const lmstudioFactory: ProviderFactory = { name: "lmstudio", type: "openai-compatible", keyEnv: [], defaultBaseUrl: "http://localhost:1234/v1", create: unused };
const ollamaFactory: ProviderFactory = { name: "ollama", keyEnv: [], baseUrlEnv: ["OLLAMA_HOST"], defaultBaseUrl: "http://localhost:11434", create: unused };

let ollama: { url: string; server: Server };
let lmstudio: { url: string; server: Server };
let anthropicApi: { url: string; server: Server };

beforeAll(async () => {
  ollama = await serve({ "/api/tags": { models: [{ name: "qwen3:8b" }, { name: "llama3.2:3b" }] } });
  lmstudio = await serve({ "/v1/models": { object: "list", data: [{ id: "mistral-7b-instruct", object: "model" }] } });
  anthropicApi = await serve({ "/v1/models?limit=100": { data: [{ id: "claude-test-1" }, { id: "claude-test-2" }] } });
});
afterAll(() => {
  for (const s of [ollama, lmstudio, anthropicApi]) s?.server.close();
});

async function hostWith(env: NodeJS.ProcessEnv) {
  const { dir, env: base } = tempProject("larik-setup-");
  const full = { ...base, ...env };
  const host = await Host.create({ plugins: [factories(anthropic, openaiCompatible, groq, lmstudioFactory)], settings: {}, cwd: dir, env: full });
  return { host, env: full };
}

describe("first-run setup", () => {
  it("is needed only when nothing names a model", async () => {
    const { host } = await hostWith({});
    expect(needsSetup(host, { values: {}, positionals: [] })).toBe(true);
    expect(needsSetup(host, { values: { model: "anthropic/x" }, positionals: [] })).toBe(false);
    expect(needsSetup(host, { values: { continue: true }, positionals: [] })).toBe(false);
    const withKey = await hostWith({ ANTHROPIC_API_KEY: "k" });
    expect(needsSetup(withKey.host, { values: {}, positionals: [] })).toBe(false);
  });

  it("finds running local servers with their models and providers with keys", async () => {
    const { host } = await hostWith({ GROQ_API_KEY: "g" });
    const found = await detectCandidates(host, { ollamaUrl: ollama.url, lmstudioUrl: lmstudio.url });
    expect(found.map((c) => c.provider)).toEqual(["ollama", "lmstudio", "groq"]);
    expect(found[0]!.models).toEqual(["qwen3:8b", "llama3.2:3b"]);
    expect(found[1]!.models).toEqual(["mistral-7b-instruct"]);
    expect(found[2]!.keyEnv).toBe("GROQ_API_KEY");
  });

  it("reports nothing for servers that are not running", async () => {
    const { host } = await hostWith({});
    const closed = await serve({});
    const url = closed.url;
    closed.server.close();
    expect(await detectCandidates(host, { ollamaUrl: url, lmstudioUrl: url, timeoutMs: 500 })).toEqual([]);
  });

  it("tests a key provider's connection by listing its models", async () => {
    const { host, env } = await hostWith({ ANTHROPIC_API_KEY: "sk-test", ANTHROPIC_BASE_URL: anthropicApi.url });
    const [c] = await detectCandidates(host, { ollamaUrl: "http://127.0.0.1:9", lmstudioUrl: "http://127.0.0.1:9", timeoutMs: 300 });
    expect(c!.provider).toBe("anthropic");
    expect(await listModels(c!, env)).toEqual(["claude-test-1", "claude-test-2"]);
    await expect(listModels({ ...c!, baseUrl: `${ollama.url}/nothing` }, env)).rejects.toThrow(/HTTP 404/);
  });

  it("saves Ollama as a keyless custom provider that resolves afterwards", async () => {
    const { host, env } = await hostWith({});
    const [c] = await detectCandidates(host, { ollamaUrl: ollama.url, lmstudioUrl: "http://127.0.0.1:9", timeoutMs: 500 });
    const spec = await saveChoice(host, c!, "qwen3:8b");
    expect(spec).toBe("ollama/qwen3:8b");
    const saved = JSON.parse(readFileSync(join(env.XDG_CONFIG_HOME!, "larik", "config.json"), "utf8"));
    expect(saved).toEqual({ model: "ollama/qwen3:8b", providers: { ollama: { type: "openai-compatible", base_url: `${ollama.url}/v1` } } });
    const r = resolveModel(undefined, host.providers, host.settings, host.env);
    expect(r.provider).toBe("ollama");
    expect(r.config.base_url).toBe(`${ollama.url}/v1`);
  });

  it("with the native ollama provider loaded, saves only the spec and a moved base_url", async () => {
    const { dir, env } = tempProject("larik-setup-");
    const host = await Host.create({ plugins: [factories(ollamaFactory)], settings: {}, cwd: dir, env });
    const [c] = await detectCandidates(host, { ollamaUrl: ollama.url, lmstudioUrl: "http://127.0.0.1:9", timeoutMs: 500 });
    expect(await saveChoice(host, c!, "llama3.2:3b")).toBe("ollama/llama3.2:3b");
    const saved = JSON.parse(readFileSync(join(env.XDG_CONFIG_HOME!, "larik", "config.json"), "utf8"));
    expect(saved).toEqual({ model: "ollama/llama3.2:3b", providers: { ollama: { base_url: ollama.url } } });
  });

  it("walks through the screen: choose the server, pick a model, save", async () => {
    const { host, env } = await hostWith({});
    const done = vi.fn();
    const r = render(<Setup host={host} onDone={done} detect={{ ollamaUrl: ollama.url, lmstudioUrl: lmstudio.url }} />);
    const screen = () => plain(r.lastFrame());
    await waitFor(() => screen().includes("Ollama at"), () => screen());
    expect(screen()).toContain("LM Studio at");
    r.stdin.write(KEY.down);
    await waitFor(() => /❯ LM Studio/.test(screen()), () => screen());
    r.stdin.write(KEY.enter);
    await waitFor(() => screen().includes("mistral-7b-instruct"), () => screen());
    expect(screen()).toContain("Connected to");
    r.stdin.write(KEY.enter);
    await waitFor(() => done.mock.calls.length === 1, "setup to finish");
    expect(done).toHaveBeenCalledWith("lmstudio/mistral-7b-instruct");
    // what stays on screen above the chat: what was saved, and where (the frames as rendered:
    // with CI set, Ink's unmount writes one more, empty, when it runs in debug mode as here)
    const saidSaved = (f: string) => /^model lmstudio\/mistral-7b-instruct saved in \S+\/larik\/config\.json$/.test(plain(f));
    await waitFor(() => r.frames.some(saidSaved), () => screen());
    const saved = JSON.parse(readFileSync(join(env.XDG_CONFIG_HOME!, "larik", "config.json"), "utf8"));
    expect(saved.model).toBe("lmstudio/mistral-7b-instruct");
    expect(saved.providers.lmstudio.base_url).toBe(`${lmstudio.url}/v1`);
    r.unmount();
  });

  // a paste, or typing faster than a frame, hands Ink "text\r" as one input without `return`
  it("takes a model spec pasted with its Enter, in one chunk", async () => {
    const { host, env } = await hostWith({ GROQ_API_KEY: "k" });
    const done = vi.fn();
    const r = render(<Setup host={host} onDone={done} detect={{ ollamaUrl: "http://127.0.0.1:9", lmstudioUrl: "http://127.0.0.1:9", timeoutMs: 300 }} />);
    const screen = () => plain(r.lastFrame());
    await waitFor(() => screen().includes("Type a model spec"), () => screen());
    r.stdin.write(KEY.up);
    await waitFor(() => /❯ Type a model spec/.test(screen()), () => screen());
    r.stdin.write(KEY.enter);
    await waitFor(() => screen().includes("enter saves"), () => screen());
    r.stdin.write("groq/llama-3.3-70b-versatile\r");
    await waitFor(() => done.mock.calls.length === 1, () => screen());
    expect(done).toHaveBeenCalledWith("groq/llama-3.3-70b-versatile");
    expect(JSON.parse(readFileSync(join(env.XDG_CONFIG_HOME!, "larik", "config.json"), "utf8")).model).toBe("groq/llama-3.3-70b-versatile");
    r.unmount();
  });

  it("takes a model filter pasted with its Enter as the first model it matches", async () => {
    const { host } = await hostWith({});
    const done = vi.fn();
    const r = render(<Setup host={host} onDone={done} detect={{ ollamaUrl: ollama.url, lmstudioUrl: lmstudio.url }} />);
    const screen = () => plain(r.lastFrame());
    await waitFor(() => /❯ Ollama at/.test(screen()), () => screen());
    r.stdin.write(KEY.enter);
    await waitFor(() => screen().includes("qwen3:8b"), () => screen());
    r.stdin.write("llama\r");
    await waitFor(() => done.mock.calls.length === 1, () => screen());
    expect(done.mock.calls[0]![0]).toMatch(/\/llama3\.2:3b$/);
    r.unmount();
  });

  it("esc aborts without saving", async () => {
    const { host, env } = await hostWith({});
    const done = vi.fn();
    const r = render(<Setup host={host} onDone={done} detect={{ ollamaUrl: "http://127.0.0.1:9", lmstudioUrl: "http://127.0.0.1:9", timeoutMs: 300 }} />);
    await waitFor(() => plain(r.lastFrame()).includes("Type a model spec"), () => plain(r.lastFrame()));
    r.stdin.write(KEY.esc);
    await waitFor(() => done.mock.calls.length === 1, "abort");
    expect(done).toHaveBeenCalledWith(undefined);
    // nothing of the screen is left behind (an empty frame, see above), and a second esc answers nothing more
    await waitFor(() => r.frames.some((f) => plain(f) === ""), () => plain(r.lastFrame()));
    r.stdin.write(KEY.esc);
    expect(done).toHaveBeenCalledTimes(1);
    expect(() => readFileSync(join(env.XDG_CONFIG_HOME!, "larik", "config.json"))).toThrow();
    r.unmount();
  });
});
