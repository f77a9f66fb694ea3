import type { RulesetDefinition } from "@stoplight/spectral-core";

/** spectral.config.mjs: the OWASP API Security ruleset with the service's documented exceptions. */
declare const ruleset: RulesetDefinition;
export default ruleset;
