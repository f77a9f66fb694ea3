/**
 * The domain's one error type: a verb refuses with a status of the interface,
 * a message and the offending fields. The HTTP edge renders it as the error
 * body (`src/worker/errors.ts`); the coordinator answers it as data.
 */

export type ErrorStatus = 400 | 403 | 404 | 409 | 413 | 422 | 429 | 500 | 501 | 503;

export class ApiError extends Error {
  readonly status: ErrorStatus;
  /** Comma-separated names of the offending fields, or empty. */
  readonly fields: string;
  readonly headers: Record<string, string>;
  constructor(status: ErrorStatus, message: string, fields: string[] | string = "", headers: Record<string, string> = {}) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.fields = Array.isArray(fields) ? fields.join(",") : fields;
    this.headers = headers;
  }
}

export const forbidden = (message = "Forbidden") => new ApiError(403, message);
export const notFound = (what = "Object") => new ApiError(404, `${what} not found`);
export const conflict = (message: string, fields: string[] | string = "") => new ApiError(409, message, fields);
export const unprocessable = (message: string, fields: string[] | string = "") => new ApiError(422, message, fields);
