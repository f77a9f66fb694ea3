/** See static-headers.mjs. */
export function staticHeaders(): string;
