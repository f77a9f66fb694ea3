/**
 * `/docs`: a self-contained API reference rendered from the OpenAPI document
 * (no scripts or styles from a CDN, so it works offline).
 */
type Json = Record<string, any>;

const escape = (s: unknown) => String(s ?? "").replace(/[&<>"]/g, (ch) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[ch]!);
/** Descriptions are Markdown-ish: `code` spans become <code>. */
const prose = (s: unknown) => escape(s).replace(/`([^`]+)`/g, "<code>$1</code>");

function schemaText(schema: Json | undefined, doc: Json, depth = 0): string {
  if (!schema) return "";
  if (schema.$ref) {
    const name = schema.$ref.split("/").pop();
    return depth > 1 ? name : `${name} ${schemaText(doc.components?.schemas?.[name], doc, depth + 1)}`;
  }
  if (schema.type === "object" && schema.properties) {
    const required = new Set(schema.required ?? []);
    const fields = Object.entries(schema.properties as Json).map(
      ([k, v]) => `${k}${required.has(k) ? "" : "?"}: ${depth > 2 ? "…" : schemaText(v as Json, doc, depth + 1)}`,
    );
    return `{ ${fields.join(", ")} }`;
  }
  if (schema.type === "array") return `${schemaText(schema.items, doc, depth + 1)}[]`;
  for (const key of ["anyOf", "oneOf"]) if (schema[key]) return (schema[key] as Json[]).map((s) => schemaText(s, doc, depth + 1)).join(" | ");
  if (schema.allOf) return (schema.allOf as Json[]).map((s) => schemaText(s, doc, depth + 1)).join(" & ");
  if (schema.enum) return schema.enum.map((v: unknown) => JSON.stringify(v)).join(" | ");
  const type = Array.isArray(schema.type) ? schema.type.join("|") : schema.type ?? "any";
  return schema.format ? `${type}(${schema.format})` : type;
}

export function renderDocs(doc: Json): string {
  const byTag = new Map<string, string[]>();
  for (const [path, item] of Object.entries(doc.paths as Json)) {
    for (const [method, op] of Object.entries(item as Json)) {
      if (typeof op !== "object" || !op.responses) continue;
      const params = (op.parameters ?? []).map((p: Json) => `<li><code>${escape(p.name)}</code> (${escape(p.in)}${p.required ? ", required" : ""}) ${escape(schemaText(p.schema, doc))} ${prose(p.description ?? p.schema?.description ?? "")}</li>`);
      const body = op.requestBody?.content?.["application/json"]?.schema;
      const responses = Object.entries(op.responses as Json).map(
        ([code, r]) => `<li><b>${code}</b> ${escape((r as Json).description)} <code>${escape(schemaText((r as Json).content?.["application/json"]?.schema, doc))}</code></li>`,
      );
      const html = `<section id="${escape(op.operationId ?? method + path)}"><h3><span class="m ${method}">${method.toUpperCase()}</span> <code>${escape(path)}</code></h3>
<p>${escape(op.summary)}</p>${op.description ? `<p>${prose(op.description)}</p>` : ""}
${params.length ? `<h4>Parameters</h4><ul>${params.join("")}</ul>` : ""}
${body ? `<h4>Body</h4><pre>${escape(schemaText(body, doc))}</pre>` : ""}
<h4>Responses</h4><ul>${responses.join("")}</ul></section>`;
      const tag = op.tags?.[0] ?? "Other";
      byTag.set(tag, [...(byTag.get(tag) ?? []), html]);
    }
  }
  const toc = [...byTag.keys()].map((t) => `<a href="#tag-${escape(t)}">${escape(t)}</a>`).join(" · ");
  const sections = [...byTag.entries()].map(([t, ops]) => `<h2 id="tag-${escape(t)}">${escape(t)}</h2>${ops.join("")}`).join("");
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escape(doc.info?.title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}
code,pre{font:13px ui-monospace,monospace;background:#f4f4f4;border-radius:3px;padding:0 .25rem}pre{padding:.5rem;white-space:pre-wrap}
section{border-top:1px solid #ddd;padding:.25rem 0}.m{display:inline-block;min-width:4rem;font-size:12px;color:#fff;border-radius:3px;padding:0 .3rem;text-align:center}
.get{background:#2a7}.post{background:#27c}.patch{background:#c82}.delete{background:#c33}.put{background:#85c}h3{margin:.5rem 0}h4{margin:.4rem 0 0}</style></head>
<body><h1>${escape(doc.info?.title)} <small>${escape(doc.info?.version)}</small></h1><p>${prose(doc.info?.description)}</p>
<p>Machine-readable: <a href="/openapi.json">/openapi.json</a> (OpenAPI 3.1).</p><nav>${toc}</nav>${sections}</body></html>`;
}
