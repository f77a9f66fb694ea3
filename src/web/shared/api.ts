/** The public HTTP API of the company, as the pages call it. */
import type { ListEnvelope } from "./types";
import { slug } from "./session";
import { IDEMPOTENCY_HEADER } from "../../shared/contract/idempotency";

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** The input fields the service named in its refusal (`fields` of the error body). */
    readonly fields: string[] = [],
  ) {
    super(message);
  }
}

/** The message of any failure, for an alert. */
export const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** Raised by every call once the token is rejected: the page asks for a new login. */
export class SessionExpired extends ApiError {}

/**
 * The service did not answer: no network, or the connection dropped. Not an ApiError, so the driver's
 * report queue keeps what it could not send; the message is for a person, not the browser's "Failed to fetch".
 */
export class Unreachable extends Error {
  constructor() {
    super("No connection to the service. Check the network and try again.");
  }
}

export interface Api {
  /** The access token (its claims tell the page who is signed in). */
  readonly token: string;
  get<T>(path: string, query?: Record<string, unknown>): Promise<T>;
  /**
   * A `FormData` body goes as multipart/form-data (uploads), anything else as JSON. With `idempotencyKey`
   * a repeat of the same call (a retry after a lost answer) does the work once and answers as the first did.
   */
  send<T>(method: "POST" | "PATCH" | "DELETE", path: string, body?: unknown, query?: Record<string, unknown>, options?: SendOptions): Promise<T>;
  list<T>(path: string, q: object, query?: Record<string, unknown>): Promise<T[]>;
  /** A file the service answers (an export): its bytes and the name `Content-Disposition` gives it, if any. */
  download(path: string, query?: Record<string, unknown>): Promise<DownloadedFile>;
  /** A file at an absolute link the service handed out (a result spreadsheet, a proof image), with the same token and refusals. */
  downloadLink(url: string): Promise<DownloadedFile>;
}

export interface SendOptions {
  idempotencyKey?: string;
}

export interface DownloadedFile {
  blob: Blob;
  filename: string | null;
}

const queryString = (query: Record<string, unknown> = {}) => {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, typeof v === "object" ? JSON.stringify(v) : String(v));
  const s = params.toString();
  return s ? `?${s}` : "";
};

/**
 * The newest D1 bookmark the service answered with (`x-d1-bookmark`), sent back with every call so no answer
 * comes from a database replica older than what this page wrote or saw. Bookmarks sort as text; answers
 * may arrive out of order, so the greatest is kept.
 */
let bookmark: string | null = null;

/** One request with the token and the bookmark; the bookmark of the answer kept. */
async function request(method: string, url: string, token: string | null, body?: unknown, options: SendOptions = {}): Promise<Response> {
  const headers: Record<string, string> = {};
  if (options.idempotencyKey) headers[IDEMPOTENCY_HEADER] = options.idempotencyKey;
  if (token) headers.authorization = `JWT ${token}`;
  if (bookmark) headers["x-d1-bookmark"] = bookmark;
  const form = body instanceof FormData;
  if (body !== undefined && !form) headers["content-type"] = "application/json";
  let res: Response;
  try {
    res = await fetch(url, { method, headers, body: body === undefined ? undefined : form ? body : JSON.stringify(body) });
  } catch {
    // fetch rejects only when no answer came (no call here passes an abort signal).
    throw new Unreachable();
  }
  const answered = res.headers.get("x-d1-bookmark");
  if (answered && (!bookmark || answered > bookmark)) bookmark = answered;
  return res;
}

/** The error of a refused request, from its (JSON) error body `data`. */
function refusal(res: Response, token: string | null, data: { message?: unknown; fields?: unknown } | null): ApiError {
  const message = (data && typeof data.message === "string" && data.message) || `${res.status} ${res.statusText}`;
  if (res.status === 403 && token && /token|authori[sz]ation/i.test(message)) return new SessionExpired(403, message);
  const fields = data && typeof data.fields === "string" && data.fields ? data.fields.split(",").map((f: string) => f.trim()) : [];
  return new ApiError(res.status, message, fields);
}

async function call<T>(method: string, url: string, token: string | null, body?: unknown, options?: SendOptions): Promise<T> {
  const res = await request(method, url, token, body, options);
  const text = await res.text();
  const data = text ? JSON.parse(text) : null;
  if (res.ok) return data as T;
  throw refusal(res, token, data);
}

/** A GET whose answer is a file, not JSON; a refusal still comes as the service's JSON error (or none). */
async function fetchFile(url: string, token: string): Promise<DownloadedFile> {
  const res = await request("GET", url, token);
  if (!res.ok) throw refusal(res, token, await res.json().catch(() => null));
  const filename = /filename="([^"]+)"/.exec(res.headers.get("content-disposition") ?? "")?.[1] ?? null;
  return { blob: await res.blob(), filename };
}

/** `POST /<slug>/auth`: the access token for email and password. */
export const login = (email: string, password: string) => call<{ access_token: string }>("POST", `/${slug}/auth`, null, { email, password });

/** Calls under `/<slug>/api` with `Authorization: JWT <token>`. */
export function createApi(token: string): Api {
  const base = `/${slug}/api`;
  const api: Api = {
    token,
    get: (path, query) => call("GET", `${base}${path}${queryString(query)}`, token),
    send: (method, path, body, query, options) => call(method, `${base}${path}${queryString(query)}`, token, body, options),
    download: (path, query) => fetchFile(`${base}${path}${queryString(query)}`, token),
    downloadLink: (url) => fetchFile(url, token),
    /** Every page of a list (the service caps pages at 100). */
    async list<T>(path: string, q: object, query: Record<string, unknown> = {}) {
      const out: T[] = [];
      for (let page = 1; ; page++) {
        const env = await api.get<ListEnvelope<T>>(path, { ...query, q, page, results_per_page: 100 });
        out.push(...env.objects);
        if (page >= env.total_pages) return out;
      }
    },
  };
  return api;
}
