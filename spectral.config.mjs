/**
 * The OpenAPI document under the OWASP API Security ruleset (issue 50):
 * `@stoplight/spectral-owasp-ruleset`, every rule at its own level, run on the
 * document the worker serves by test/browser/openapi-document.test.ts and by
 * `npx spectral lint -r spectral.config.mjs <url>/openapi.json`.
 *
 * Where the service decides otherwise, the rule is changed here, with the reason.
 */
import owasp from "@stoplight/spectral-owasp-ruleset";
import { schema } from "@stoplight/spectral-functions";

/** The schemas of what clients send: request bodies and parameters (the service's answers are its own output). */
const requestSchemas = (type) => [
  `$.paths[*][*].requestBody..[?(@ && @.type=="${type}")]`,
  `$.paths[*][*].parameters[*].schema[?(@ && @.type=="${type}")]`,
  `$.paths[*][*].parameters[?(@.schema && @.schema.type=="${type}")].schema`,
];

/** The rule as OWASP writes it, applied to request schemas only. */
const onRequests = (name, type) => ({ ...owasp.rules[name], given: requestSchemas(type) });

/** The rule as OWASP writes it, on every path but `/health` (liveness for load balancers: it touches nothing, so it has no limit). */
const exceptHealth = (name) => ({ ...owasp.rules[name], given: owasp.rules[name].given.replace(/^\$\.paths(\[\*\])?/, '$.paths[?(@property != "/health")]') });

/**
 * The operations anyone may call, each for its reason: the base map (`/tiles/...`, read by the public tracking
 * page; it holds no company's data), sign-in and registration (`/auth`, `/register`: throttled per account and
 * address), the customer's tracking page (`/track/{token}`: the random code of the link the customer was sent
 * is the credential, and it shows one delivery) and proof images (`/proofimage/...`: signed, expiring links).
 */
const PUBLIC_PATHS = /^\/(tiles\/.*|\{slug\}\/(auth|register|track\/\{token\}|proofimage\/.*))$/;

/** Every other operation names the scheme that protects it (each declares its own `security`). */
const protectedOperations = (name, methods) => ({
  ...owasp.rules[name],
  given: `$.paths[?(!@property.match(${PUBLIC_PATHS}))][${methods}]`,
  then: { field: "security", function: schema, functionOptions: { schema: { type: "array", minItems: 1, items: { type: "object", minProperties: 1 } } } },
});

export default {
  extends: [[owasp, "all"]],
  rules: {
    // The interface's ids are integers (dispatch-api.md: `/delivery/<id>` etc.); clients are written against it.
    // Every object is scoped to the caller's company, so a guessed id answers 404, never another company's data.
    "owasp:api1:2023-no-numeric-ids": "off",
    // The interface answers 403 for a missing or invalid token as for a forbidden role (contract.md: no 401).
    "owasp:api8:2023-define-error-responses-401": "off",
    // Bounds protect the service from what clients send; its answers are bounded by its own pages and limits
    // (lists at most 100 per page), so the limits apply to request bodies and parameters.
    "owasp:api4:2023-string-limit": onRequests("owasp:api4:2023-string-limit", "string"),
    "owasp:api4:2023-array-limit": onRequests("owasp:api4:2023-array-limit", "array"),
    "owasp:api4:2023-integer-limit": onRequests("owasp:api4:2023-integer-limit", "integer"),
    "owasp:api4:2023-integer-format": onRequests("owasp:api4:2023-integer-format", "integer"),
    // Free text (names, notes, addresses, skills) has no format or pattern to give; it is bounded (string-limit).
    "owasp:api4:2023-string-restricted": "off",
    "owasp:api2:2023-read-restricted": protectedOperations("owasp:api2:2023-read-restricted", "get,head"),
    "owasp:api2:2023-write-restricted": protectedOperations("owasp:api2:2023-write-restricted", "post,put,patch,delete"),
    // The tracking link's code is in its path by design: the link is what the customer is sent (see PUBLIC_PATHS).
    "owasp:api2:2023-no-credentials-in-url": {
      ...owasp.rules["owasp:api2:2023-no-credentials-in-url"],
      given: owasp.rules["owasp:api2:2023-no-credentials-in-url"].given.map((g) => g.replace(/^\$\.\./, '$.paths[?(@property != "/{slug}/track/{token}")]..')),
    },
    // Operations that take nothing a client could get wrong: the base map's description and the shards (no input),
    // and the tracking page, which answers any unknown link with its "not found" page (404).
    "owasp:api8:2023-define-error-validation": {
      ...owasp.rules["owasp:api8:2023-define-error-validation"],
      given: '$.paths[?(@property != "/tiles/map.json" && @property != "/_operator/shards" && @property != "/{slug}/track/{token}")]..responses',
    },
    "owasp:api4:2023-rate-limit": exceptHealth("owasp:api4:2023-rate-limit"),
    "owasp:api4:2023-rate-limit-responses-429": exceptHealth("owasp:api4:2023-rate-limit-responses-429"),
    // Browsers cannot set a websocket's headers, so its credential is in the URL: the ticket of POST /ws/ticket
    // (single-use, 30 s: a copy in a log opens nothing) and, deprecated, the access token itself until its sunset
    // (ACCESS_TOKEN_IN_URL in src/shared/contract/live.ts; then the scheme goes from the document and this exception with it).
    "owasp:api2:2023-no-api-keys-in-url": {
      ...owasp.rules["owasp:api2:2023-no-api-keys-in-url"],
      given: ['$..[securitySchemes][?(@ && @.type=="apiKey" && @.name != "ticket" && @.name != "access_token")].in'],
    },
    // A local development server has no TLS; every deployment is served over https.
    "owasp:api8:2023-no-server-http": {
      ...owasp.rules["owasp:api8:2023-no-server-http"],
      then: { function: owasp.rules["owasp:api8:2023-no-server-http"].then.function, functionOptions: { notMatch: "^http://(?!(localhost|127\\.0\\.0\\.1|\\[::1\\])[:/])" } },
    },
  },
};
