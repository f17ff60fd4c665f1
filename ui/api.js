// The console's only way to the server: the public REST API (/api/v1), with the session cookie the browser
// holds (HttpOnly, so no script reads it) and, on every request that changes something, the session's
// CSRF token in X-Depot-CSRF.

let csrf = "";

export class ApiError extends Error {
  constructor(status, problem) {
    super(problem?.detail || `HTTP ${status}`);
    this.status = status;
    this.problem = problem;
  }
}

export function setCsrf(token) {
  csrf = token || "";
}

export function path(...segments) {
  return "/api/v1/" + segments.map((s) => encodeURIComponent(String(s))).join("/");
}

export async function api(method, url, body) {
  const headers = { Accept: "application/json" };
  if (method !== "GET" && method !== "HEAD") headers["X-Depot-CSRF"] = csrf;
  const init = { method, headers, credentials: "same-origin", cache: "no-store" };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const res = await fetch(url, init);
  if (res.status === 204) return null;
  let data = null;
  const type = res.headers.get("Content-Type") || "";
  if (type.includes("json")) data = await res.json();
  if (!res.ok) throw new ApiError(res.status, data);
  return data;
}

/// Every page of a list ({items, next_cursor}), up to `max` items.
export async function listAll(url, max = 1000) {
  const out = [];
  let cursor = null;
  do {
    const sep = url.includes("?") ? "&" : "?";
    const page = await api("GET", url + (cursor ? `${sep}cursor=${encodeURIComponent(cursor)}` : ""));
    out.push(...page.items);
    cursor = page.next_cursor;
  } while (cursor && out.length < max);
  return out;
}
