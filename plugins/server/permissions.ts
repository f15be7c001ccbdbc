/**
 * Pending permission requests of one session (LARIK-REFERENCE §21): each `permission_request`
 * is held until any client answers it; the end of the run expires the unanswered ones. Every
 * outcome is published as `permission_resolved` (`allowed`, `denied` or `expired`).
 */
import { errorText, updatePrivateProjectSettings, type Agent, type EventOf } from "../../kernel/index.js";
import { ApiError } from "./errors.js";
import type { SessionBus } from "./bus.js";

export type PermissionRequest = EventOf<"permission_request">;

/** A request waiting for an answer, as `GET …/permissions` lists it. */
export interface PendingPermission {
  request_id: string;
  /** seq of the `permission_request` event on the session's bus. */
  seq: number;
  event: PermissionRequest;
}

export type Resolution = "allowed" | "denied" | "expired";

/** What `always: true` answers (§21): whether the rule was saved, and why not. */
export interface AlwaysResult {
  allowed: boolean;
  persisted: boolean;
  error?: string;
}

/** Answered ids remembered so a late second answer gets 409 rather than 404. */
const REMEMBER = 256;

export class PermissionBook {
  readonly #bus: SessionBus;
  #pending = new Map<string, PendingPermission>();
  #resolved = new Map<string, Resolution>();

  constructor(bus: SessionBus) {
    this.#bus = bus;
  }

  /** Publishes a request and holds it. */
  add(event: PermissionRequest): void {
    const seq = this.#bus.publish(event);
    this.#pending.set(event.request_id, { request_id: event.request_id, seq, event });
  }

  list(): PendingPermission[] {
    return [...this.#pending.values()];
  }

  /**
   * Answers a pending request through the agent and publishes the outcome. With `always` and
   * `allow`, the suggested rule is added for the session and saved to the private project
   * settings; the result says whether saving worked.
   * @throws ApiError 404 for an unknown id, 409 for one already answered or expired.
   */
  async answer(agent: Agent, requestId: string, answer: { allow: boolean; always?: boolean; reason?: string }): Promise<AlwaysResult | undefined> {
    const pending = this.#pending.get(requestId);
    if (!pending) {
      const done = this.#resolved.get(requestId);
      if (done) throw new ApiError(409, "conflict", `permission request ${requestId} was already ${done}`);
      throw new ApiError(404, "not_found", `no pending permission request ${requestId}: GET …/permissions lists the pending ones`);
    }
    let result: AlwaysResult | undefined;
    if (answer.always) {
      result = answer.allow ? await this.#saveAlways(agent, pending.event) : { allowed: false, persisted: false };
    }
    // The kernel saves "always" rules itself but cannot report the outcome, so the rule was
    // saved above and the kernel only hears allow/deny.
    try {
      agent.respond(requestId, { allow: answer.allow, reason: answer.reason });
    } catch (err) {
      // the run ended between our check and the answer
      this.#settle(requestId, "expired");
      throw new ApiError(409, "conflict", errorText(err));
    }
    this.#settle(requestId, answer.allow ? "allowed" : "denied");
    return result;
  }

  /** Expires every pending request (the run ended); returns how many. */
  expireAll(): number {
    const ids = [...this.#pending.keys()];
    for (const id of ids) this.#settle(id, "expired");
    return ids.length;
  }

  #settle(requestId: string, outcome: Resolution): void {
    if (!this.#pending.delete(requestId)) return;
    this.#resolved.set(requestId, outcome);
    if (this.#resolved.size > REMEMBER) this.#resolved.delete(this.#resolved.keys().next().value!);
    this.#bus.publish({ type: "permission_resolved", request_id: requestId, outcome });
  }

  async #saveAlways(agent: Agent, event: PermissionRequest): Promise<AlwaysResult> {
    const rule = event.suggested_rule;
    if (!rule) return { allowed: true, persisted: false, error: `no rule can be saved for ${event.tool_name}: allowed once` };
    agent.checker.addAllowRule(rule);
    try {
      await updatePrivateProjectSettings(
        agent.host.cwd,
        (cur) => {
          const perms = (cur.permissions ?? {}) as { allow?: string[] };
          return { ...cur, permissions: { ...perms, allow: [...new Set([...(perms.allow ?? []), rule])] } };
        },
        agent.host.env,
      );
      return { allowed: true, persisted: true };
    } catch (err) {
      return { allowed: true, persisted: false, error: `"${rule}" holds for this session only: ${errorText(err)}` };
    }
  }
}
