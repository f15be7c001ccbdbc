/**
 * A local model server that speaks the providers' wire formats (OpenAI Chat Completions SSE and
 * Anthropic Messages SSE) and answers from a script, recording every request. End-to-end tests
 * and benchmarks point the real CLI at it with OPENAI_BASE_URL / ANTHROPIC_BASE_URL.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** One scripted model reply: text and/or tool calls. */
export interface MockReply {
  text?: string;
  /** Tool calls; `raw`, when set, is streamed as the arguments instead of `input` as JSON (JSON cut short: `{"path": "a.t`). */
  tools?: { id: string; name: string; input: unknown; raw?: string }[];
  /** Respond with this HTTP status and JSON body instead. */
  status?: number;
  body?: unknown;
  /**
   * Stream the text and calls but never the end of the reply: the response stays open, as a model
   * still writing, until the client goes away (a cancelled turn, a `--timeout`).
   */
  hold?: boolean;
  /** Stream the text and calls, then end the response without the reply's end (a broken stream). */
  cut?: boolean;
}

export interface RecordedRequest {
  path: string;
  headers: IncomingMessage["headers"];
  body: any;
  /** `performance.now()` (this process's clock) when the request arrived. */
  at: number;
}

export interface MockModelServer {
  url: string;
  requests: RecordedRequest[];
  server: Server;
  push(...r: MockReply[]): void;
  close(): Promise<void>;
}

function openaiChunks(r: MockReply, model: string): string[] {
  const id = "chatcmpl-mock";
  const chunk = (delta: object, finish: string | null = null) =>
    JSON.stringify({ id, object: "chat.completion.chunk", created: 0, model, choices: [{ index: 0, delta, finish_reason: finish }] });
  const out = [chunk({ role: "assistant", content: "" })];
  for (const piece of (r.text ?? "").match(/[\s\S]{1,12}/g) ?? []) out.push(chunk({ content: piece }));
  (r.tools ?? []).forEach((t, index) => {
    out.push(chunk({ tool_calls: [{ index, id: t.id, type: "function", function: { name: t.name, arguments: "" } }] }));
    const args = t.raw ?? JSON.stringify(t.input);
    for (const piece of args.match(/[\s\S]{1,10}/g) ?? []) out.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
  });
  out.push(chunk({}, r.tools?.length ? "tool_calls" : "stop"));
  out.push(JSON.stringify({ id, object: "chat.completion.chunk", created: 0, model, choices: [], usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 } }));
  return out.map((d) => `data: ${d}\n\n`).concat("data: [DONE]\n\n");
}

function anthropicEvents(r: MockReply, model: string): string[] {
  const ev = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  const out = [
    ev("message_start", {
      message: { id: "msg_mock", type: "message", role: "assistant", model, content: [], stop_reason: null, usage: { input_tokens: 100, output_tokens: 1 } },
    }),
  ];
  let index = 0;
  if (r.text) {
    out.push(ev("content_block_start", { index, content_block: { type: "text", text: "" } }));
    for (const piece of r.text.match(/[\s\S]{1,12}/g) ?? []) out.push(ev("content_block_delta", { index, delta: { type: "text_delta", text: piece } }));
    out.push(ev("content_block_stop", { index }));
    index++;
  }
  for (const t of r.tools ?? []) {
    out.push(ev("content_block_start", { index, content_block: { type: "tool_use", id: t.id, name: t.name, input: {} } }));
    const args = t.raw ?? JSON.stringify(t.input);
    out.push(ev("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: "" } }));
    for (const piece of args.match(/[\s\S]{1,10}/g) ?? []) out.push(ev("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: piece } }));
    out.push(ev("content_block_stop", { index }));
    index++;
  }
  out.push(ev("message_delta", { delta: { stop_reason: r.tools?.length ? "tool_use" : "end_turn", stop_sequence: null }, usage: { input_tokens: 100, output_tokens: 20 } }));
  out.push(ev("message_stop", {}));
  return out;
}

/** Starts the server on 127.0.0.1 (port 0). Replies are used in order, one per request. */
export async function startMockModelServer(replies: MockReply[] = []): Promise<MockModelServer> {
  const queue = [...replies];
  const requests: RecordedRequest[] = [];
  const server = createServer((req, res) => {
    const at = performance.now();
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      let body: any;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch {
        body = Buffer.concat(chunks).toString("utf8");
      }
      requests.push({ path: req.url ?? "", headers: req.headers, body, at });
      const reply = queue.shift() ?? { text: "(no scripted reply left)" };
      if (reply.status) {
        res.writeHead(reply.status, { "content-type": "application/json" });
        res.end(JSON.stringify(reply.body ?? { error: { message: "mock error" } }));
        return;
      }
      const model = typeof body?.model === "string" ? body.model : "mock";
      const anthropic = (req.url ?? "").includes("/messages");
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      const frames = anthropic ? anthropicEvents(reply, model) : openaiChunks(reply, model);
      // a held or cut reply stops before its finish (OpenAI: the finish chunk, usage and [DONE]; Anthropic: message_delta and message_stop)
      for (const frame of reply.hold || reply.cut ? frames.slice(0, anthropic ? -2 : -3) : frames) res.write(frame);
      if (!reply.hold) res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    server,
    push: (...r) => void queue.push(...r),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // a held reply whose client is still connected would keep the server open
        server.closeAllConnections();
      }),
  };
}
