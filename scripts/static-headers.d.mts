/** See static-headers.mjs. */
export function staticHeaders(tileOrigin: string): string;
