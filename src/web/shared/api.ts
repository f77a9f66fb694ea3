/** The public HTTP API of the company, as the pages call it: the typed client (openapi-fetch on the generated `paths` of src/shared/contract/openapi.ts); log-in and files beside it. */
import createClient from "openapi-fetch";
import type { paths } from "../../shared/contract/openapi";
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

/**
 * The company's operations by their path under `/<slug>/api` (`/delivery/{delivery_id}`), typed by the
 * generated `paths` of the OpenAPI document (src/shared/contract/openapi.ts).
 */
type CompanyPaths = { [P in keyof paths as P extends `/{slug}/api${infer Rest}` ? Rest : never]: paths[P] };
type Verb = "get" | "post" | "put" | "patch" | "delete";
/** The paths that have an operation of this method. */
export type PathOf<M extends Verb> = { [P in keyof CompanyPaths]: [NonNullable<CompanyPaths[P][M]>] extends [never] ? never : P }[keyof CompanyPaths];
type Operation<P, M extends Verb> = P extends keyof CompanyPaths ? NonNullable<CompanyPaths[P][M]> : never;
type PathParams<O> = O extends { parameters: { path: infer A } } ? Omit<A, "slug"> : {};
type QueryParams<O> = O extends { parameters: { query?: infer Q } } ? Q : never;
type BodyOf<O> = O extends { requestBody?: { content: { "application/json": infer B } } }
  ? B
  : O extends { requestBody?: { content: { "multipart/form-data": unknown } } }
    ? FormData
    : never;
type Json<R> = R extends { content: { "application/json": infer J } } ? J : undefined;
/** What a successful answer holds. */
export type AnswerOf<O> = O extends { responses: infer R } ? Json<R[Extract<keyof R, 200 | 201 | 202 | 204>]> : never;
/** A call's path parameters (but the slug), query, body and its Idempotency-Key. */
export type CallArgs<O> = ({} extends PathParams<O> ? { path?: PathParams<O> } : { path: PathParams<O> }) & {
  query?: QueryParams<O>;
  body?: BodyOf<O>;
  /** With a key, a repeat of the same call (a retry after a lost answer) does the work once and answers as the first did. */
  idempotencyKey?: string;
};
type ArgsTuple<O> = {} extends PathParams<O> ? [args?: CallArgs<O>] : [args: CallArgs<O>];
type ListItem<O> = AnswerOf<O> extends infer A ? (A extends { objects: (infer I)[] } ? I : never) : never;

export interface Api {
  /** The access token (its claims tell the page who is signed in). */
  readonly token: string;
  get<P extends PathOf<"get">>(path: P, ...args: ArgsTuple<Operation<P, "get">>): Promise<AnswerOf<Operation<P, "get">>>;
  /** A `FormData` body goes as multipart/form-data (uploads), anything else as JSON. */
  send<M extends "POST" | "PUT" | "PATCH" | "DELETE", P extends PathOf<Lowercase<M>>>(method: M, path: P, ...args: ArgsTuple<Operation<P, Lowercase<M>>>): Promise<AnswerOf<Operation<P, Lowercase<M>>>>;
  /** Every page of a list (the service caps pages at 100), filtered by `q` (an object, sent as its JSON). */
  list<P extends PathOf<"get">>(path: P, q: object, query?: Omit<NonNullable<QueryParams<Operation<P, "get">>>, "q" | "page" | "results_per_page">): Promise<ListItem<Operation<P, "get">>[]>;
  /** A file the service answers (an export): its bytes and the name `Content-Disposition` gives it, if any. */
  download<P extends PathOf<"get">>(path: P, query?: QueryParams<Operation<P, "get">>): Promise<DownloadedFile>;
  /** A file at an absolute link the service handed out (a result spreadsheet, a proof image), with the same token and refusals. */
  downloadLink(url: string): Promise<DownloadedFile>;
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

const BOOKMARK_HEADER = "x-d1-bookmark";

/** The bookmark of an answer, kept when it is the newest. */
function keepBookmark(res: Response) {
  const answered = res.headers.get(BOOKMARK_HEADER);
  if (answered && (!bookmark || answered > bookmark)) bookmark = answered;
}

/** One request outside the operations (log-in, files) with the token and the bookmark; the bookmark of the answer kept. */
async function request(method: string, url: string, token: string | null, body?: unknown): Promise<Response> {
  const headers: Record<string, string> = {};
  if (token) headers.authorization = `JWT ${token}`;
  if (bookmark) headers[BOOKMARK_HEADER] = bookmark;
  if (body !== undefined) headers["content-type"] = "application/json";
  let res: Response;
  try {
    res = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch {
    // fetch rejects only when no answer came (no call here passes an abort signal).
    throw new Unreachable();
  }
  keepBookmark(res);
  return res;
}

/** The error of a refused request, from its (JSON) error body `data`. */
function refusal(res: Response, token: string | null, data: { message?: unknown; fields?: unknown } | null): ApiError {
  const message = (data && typeof data.message === "string" && data.message) || `${res.status} ${res.statusText}`;
  if (res.status === 403 && token && /token|authori[sz]ation/i.test(message)) return new SessionExpired(403, message);
  const fields = data && typeof data.fields === "string" && data.fields ? data.fields.split(",").map((f: string) => f.trim()) : [];
  return new ApiError(res.status, message, fields);
}

async function call<T>(method: string, url: string, token: string | null, body?: unknown): Promise<T> {
  const res = await request(method, url, token, body);
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

/** `{name}` of a declared path filled from `params` (the slug is the page's). */
const fill = (path: string, params: Record<string, unknown> = {}) => path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(String(params[name])));

/**
 * Calls under `/<slug>/api` with `Authorization: JWT <token>`, through openapi-fetch on the generated
 * `paths`: the token, the bookmark and an Idempotency-Key go on each request (middleware), the
 * query's objects (`q`) as their JSON, a refusal as an ApiError, no answer as Unreachable.
 */
export function createApi(token: string, onExpired: () => void = () => undefined): Api {
  /** Every refusal of the token also tells the page (it asks for a new login). */
  const expiring = <T,>(work: Promise<T>) =>
    work.catch((err: unknown) => {
      if (err instanceof SessionExpired) onExpired();
      throw err;
    });
  const client = createClient<paths>({ baseUrl: location.origin, querySerializer: (query) => queryString(query as Record<string, unknown>).slice(1) });
  client.use({
    onRequest: ({ request }) => {
      request.headers.set("authorization", `JWT ${token}`);
      if (bookmark) request.headers.set(BOOKMARK_HEADER, bookmark);
      return request;
    },
    onResponse: ({ response }) => {
      keepBookmark(response);
      return response;
    },
  });
  const operate = async (method: string, path: string, args: { path?: object; query?: object; body?: unknown; idempotencyKey?: string } = {}) => {
    const init = {
      params: { path: { slug, ...args.path }, query: args.query },
      body: args.body,
      headers: args.idempotencyKey ? { [IDEMPOTENCY_HEADER]: args.idempotencyKey } : undefined,
    };
    let answer;
    try {
      answer = await client.request(method.toLowerCase() as "get", `/{slug}/api${path}` as "/{slug}/api/company", init as never);
    } catch {
      // fetch rejects only when no answer came (no call here passes an abort signal).
      throw new Unreachable();
    }
    if (answer.response.ok) return (answer.data ?? null) as never;
    throw refusal(answer.response, token, (answer.error ?? null) as { message?: unknown; fields?: unknown } | null);
  };
  const base = `/${slug}/api`;
  const api: Api = {
    token,
    get: (path, ...args) => expiring(operate("GET", path, args[0] as never)),
    send: (method, path, ...args) => expiring(operate(method, path, args[0] as never)),
    download: (path, query) => expiring(fetchFile(`${base}${fill(path)}${queryString(query as Record<string, unknown>)}`, token)),
    downloadLink: (url) => expiring(fetchFile(url, token)),
    async list(path, q, query) {
      const out: never[] = [];
      for (let page = 1; ; page++) {
        const envelope = (await expiring(operate("GET", path, { query: { ...query, q, page, results_per_page: 100 } }))) as ListEnvelope<never>;
        out.push(...envelope.objects);
        if (page >= envelope.total_pages) return out;
      }
    },
  };
  return api;
}
