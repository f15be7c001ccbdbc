/**
 * API errors. Every failed request answers `{"error": {"code", "message"}}` with a one-line
 * message that says what to fix (LARIK-REFERENCE §21, "clear JSON errors").
 */

/** Machine-readable error codes of the server API. */
export type ErrorCode =
  | "bad_request"
  | "invalid_json"
  | "empty_body"
  | "unauthorized"
  | "forbidden_host"
  | "not_found"
  | "method_not_allowed"
  | "busy"
  | "conflict"
  | "payload_too_large"
  | "not_implemented"
  | "model_error"
  | "internal";

/** An error a handler throws to answer with `status` and `{"error": {code, message}}`. */
export class ApiError extends Error {
  readonly status: number;
  readonly code: ErrorCode;
  readonly headers?: Record<string, string>;
  constructor(status: number, code: ErrorCode, message: string, headers?: Record<string, string>) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
    this.headers = headers;
  }
}

/** The status → code mapping for errors raised by h3 itself (no route, bad URL, body limit). */
export function codeForStatus(status: number): ErrorCode {
  switch (status) {
    case 400:
      return "bad_request";
    case 401:
      return "unauthorized";
    case 403:
      return "forbidden_host";
    case 404:
      return "not_found";
    case 405:
      return "method_not_allowed";
    case 409:
      return "conflict";
    case 413:
      return "payload_too_large";
    case 501:
      return "not_implemented";
    default:
      return status >= 500 ? "internal" : "bad_request";
  }
}

/** A JSON response; `undefined` body gives 204-style empty responses. */
export function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  if (body === undefined) return new Response(null, { status, headers });
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json; charset=utf-8", ...headers },
  });
}

/** The error response for `err`: its own status and code for {@link ApiError}, 500 otherwise. */
export function errorResponse(err: ApiError): Response {
  return json(err.status, { error: { code: err.code, message: err.message } }, err.headers);
}
