// The dashboard's one way to talk to the server: JSON in, JSON out, errors as ApiError with the
// server's message and the field it is about (`param`), so forms can show it beside that field.

export class ApiError extends Error {
  constructor(status, body) {
    const error = (body && body.error) || {};
    super(error.message || `the server answered ${status}`);
    this.status = status;
    this.param = error.param || "";
    this.code = error.code || "";
  }
}

export async function api(method, path, body) {
  const init = { method, credentials: "same-origin", headers: { accept: "application/json" } };
  if (body !== undefined) {
    init.headers["content-type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  const text = await response.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (response.status === 401 && (data?.error?.code === "admin_token_required")) {
    // The session ended: log in again and come back here.
    window.location.assign(`/login?next=${encodeURIComponent(location.pathname + location.search)}`);
  }
  if (!response.ok) throw new ApiError(response.status, data);
  return data;
}

// Aliases hold slashes: each segment is encoded, the slashes stay path separators.
export function aliasPath(alias) {
  return alias.split("/").map(encodeURIComponent).join("/");
}
