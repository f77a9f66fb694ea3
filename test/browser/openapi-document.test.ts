/**
 * The OpenAPI document as integrators' tools read it (issue 50): the one the
 * worker serves, checked with tools no one here wrote: the official
 * OpenAPI 3.1 JSON Schema (@seriousme/openapi-schema-validator),
 * Redocly's recommended rules (redocly.yaml says which are off and why) and
 * the OWASP API Security ruleset of Spectral (spectral.config.mjs, likewise).
 */
import { Validator } from "@seriousme/openapi-schema-validator";
import { createConfig, lintFromString } from "@redocly/openapi-core";
// CommonJS packages: Node's ESM loader does not find all their named exports.
import spectralCore from "@stoplight/spectral-core";
import spectralParsers from "@stoplight/spectral-parsers";
import owaspRules from "../../spectral.config.mjs";
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Service, startService } from "./service";

describe("the served OpenAPI document", () => {
  let service: Service;
  let text: string;
  beforeAll(async () => {
    service = await startService("openapi-doc");
    text = await (await fetch(`${service.base}/openapi.json`)).text();
  }, 120_000);
  afterAll(() => service?.stop());

  it("validates against the official OpenAPI 3.1 schema", async () => {
    const result = await new Validator().validate(JSON.parse(text));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it("passes Redocly's recommended rules with no error and no warning", async () => {
    const config = await createConfig(readFileSync("redocly.yaml", "utf8"), { configPath: "redocly.yaml" });
    const problems = await lintFromString({ source: text, absoluteRef: `${service.base}/openapi.json`, config });
    expect(problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} ${p.location?.[0]?.pointer ?? ""}`)).toEqual([]);
  });

  it("passes the OWASP API Security ruleset (Spectral) with no finding but the documented exceptions", async () => {
    const spectral = new spectralCore.Spectral();
    spectral.setRuleset(owaspRules);
    const findings = await spectral.run(new spectralCore.Document(text, spectralParsers.Json, "openapi.json"));
    expect(findings.map((f) => `${f.code} ${f.path.join("/")}: ${f.message}`)).toEqual([]);
  });

  it("names every operation with a unique operationId and names the server it was read from", () => {
    const doc = JSON.parse(text) as { servers: { url: string }[]; paths: Record<string, Record<string, { operationId?: string }>> };
    const ids = Object.values(doc.paths).flatMap((item) => Object.values(item).map((op) => op.operationId));
    expect(ids.filter((id) => !id)).toEqual([]);
    expect(new Set(ids).size).toBe(ids.length);
    expect(doc.servers).toEqual([{ url: service.base, description: "This deployment (local development)", "x-internal": false }]);
  });
});
