/**
 * The shell of the few pages the Worker renders itself for people without a
 * login (customer tracking, registration with an emailed code): one small
 * HTML document, mobile first, no script, no external resource.
 */
import { escapeHtml } from "../core/lib/html";
import type { Language } from "../core/services/company-settings";

/** No script at all; inline styles only; images only inline. */
export const SERVER_PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const STYLE = `body{margin:0;font:16px/1.5 system-ui,sans-serif;color:#1a1a1a;background:#f4f5f7}
main{max-width:32rem;margin:0 auto;padding:1rem}
header p{margin:0;color:#555}h1{margin:.2rem 0 1rem;font-size:1.4rem}
.card{background:#fff;border-radius:.75rem;padding:1rem;margin-bottom:1rem;box-shadow:0 1px 3px rgba(0,0,0,.08)}
.state{font-size:1.25rem;font-weight:600;display:flex;align-items:center;gap:.5rem}
.dot{width:.9rem;height:.9rem;border-radius:50%;display:inline-block}
svg{width:100%;height:auto;background:#eef1f4;border-radius:.5rem}
label{display:block;margin:.75rem 0 .25rem;font-weight:600}
input{box-sizing:border-box;width:100%;padding:.6rem;font:inherit;border:1px solid #999;border-radius:.4rem}
button,.button{display:inline-block;margin-top:1rem;padding:.6rem 1.2rem;font:inherit;color:#fff;background:#0072B2;border:0;border-radius:.4rem;text-decoration:none}
.error{color:#a33}
footer{color:#666;font-size:.85rem}
figure.proof{margin:.75rem 0 0}figure.proof img{max-width:100%;max-height:20rem;border-radius:.5rem;background:#fff;border:1px solid #ddd}figcaption{color:#555;font-size:.85rem}`;

export function serverPage(lang: Language, title: string, body: string, options: { refreshSeconds?: number } = {}): string {
  const refresh = options.refreshSeconds ? `<meta http-equiv="refresh" content="${options.refreshSeconds}">` : "";
  return `<!doctype html><html lang="${lang}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">${refresh}<meta name="robots" content="noindex"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body><main>${body}</main></body></html>`;
}

/** Headers of every server-rendered page: its CSP, never cached, never referred, never sniffed. */
export const SERVER_PAGE_HEADERS = {
  "content-security-policy": SERVER_PAGE_CSP,
  "cache-control": "no-store",
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
} as const;
