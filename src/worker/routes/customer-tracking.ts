/**
 * Customer tracking (beyond the interface documents): the public page and
 * its JSON under `/<slug>` (no login: the token is the key), and the
 * dispatcher's endpoints to issue and revoke a delivery's link.
 */
import { OpenAPIHono, createRoute, z } from "@hono/zod-openapi";
import { notFound } from "../../core/errors";
import type { AppEnv } from "../app-env";
import { validationHook } from "../errors";
import { IdParam, apiRoute, errorResponses, jsonResponse } from "../openapi";
import { loadDelivery } from "../../core/services/delivery-writes";
import { POSITION_VISIBLE_WITHIN_STOPS, revokeTrackingLinks, rotateTrackingLink, trackingUrl, trackingView } from "../../core/services/customer-tracking";
import { SERVER_PAGE_CSP, SERVER_PAGE_HEADERS } from "../html-page";
import { PROOF_LINK_SECONDS, type ProofKind, signedProofUrl } from "../../core/services/proofs";
import { renderTrackingNotFound, renderTrackingPage } from "../tracking-page";
import { publicBase } from "./company";

const Token = z.object({ token: z.string().max(100).openapi({ param: { name: "token", in: "path" } }) });

const TrackingViewSchema = z
  .object({
    company: z.object({ name: z.string(), timezone: z.string(), language: z.enum(["de", "en"]) }),
    state: z.enum(["open", "scheduled", "on_the_way", "delivered", "not_delivered", "cancelled"]),
    window: z.object({ from: z.string().nullable(), to: z.string().nullable() }),
    eta: z.object({ from: z.string(), to: z.string() }).nullable(),
    stops_before: z.number().int().nullable(),
    driver: z
      .object({ firstname: z.string().nullable(), position: z.object({ lat: z.number(), lng: z.number(), timestamp: z.string() }).nullable() })
      .nullable(),
    destination: z.object({ lat: z.number(), lng: z.number() }).nullable(),
    proof: z
      .object({
        time: z.string(),
        notes: z.string().nullable(),
        recipient: z.string().nullable().optional().openapi({ description: "Who received it (only when the company shows proofs on the tracking page)" }),
        photo_url: z.string().nullable().optional().openapi({ description: `Absolute link to the delivery photo, signed and valid ${PROOF_LINK_SECONDS / 60} minutes (only when the company shows proofs on the tracking page)` }),
        signature_url: z.string().nullable().optional().openapi({ description: "Likewise the signature" }),
      })
      .nullable(),
  })
  .openapi("TrackingView");

const trackingJson = createRoute({
  method: "get",
  path: "/track/{token}",
  operationId: "getTracking",
  security: [],
  tags: ["Customer tracking"],
  summary: "What a customer's tracking link shows (no login)",
  description:
    `The delivery's state, ETA window, open stops before it, the driver's first name and, while the delivery is at most ${POSITION_VISIBLE_WITHIN_STOPS} stops ahead on a route that is on the way, ` +
    "the driver's position rounded to about 500 m; the proof of delivery afterwards (with the recipient and signed links to the photo and signature when the company has `proof_on_tracking_page` on). Nothing else of the company. 404 for an unknown or revoked token. The page `/{slug}/t/{token}` shows the same.",
  request: { params: Token },
  responses: { 200: jsonResponse(TrackingViewSchema, "The delivery as its customer may see it"), 404: errorResponses[404], 429: errorResponses[429] },
});

const issueLink = apiRoute({
  method: "post",
  path: "/delivery/{delivery_id}/trackinglink",
  operationId: "createTrackingLink",
  tags: ["Customer tracking"],
  summary: "Issue a new tracking link for a delivery",
  description: "The previous link of the delivery stops working. Customer ETA messages carry the delivery's current link (made when it has none).",
  request: { params: IdParam("delivery_id") },
  responses: { 201: jsonResponse(z.object({ token: z.string(), link: z.string() }), "The new link") },
});

const revokeLinks = apiRoute({
  method: "delete",
  path: "/delivery/{delivery_id}/trackinglink",
  operationId: "revokeTrackingLink",
  tags: ["Customer tracking"],
  summary: "Revoke the delivery's tracking links",
  description: "Its page then shows a friendly \"not found\" page.",
  request: { params: IdParam("delivery_id") },
  responses: { 204: { description: "Revoked" } },
});

const signer = (c: { env: AppEnv["Bindings"]; req: { url: string }; get(key: "company"): AppEnv["Variables"]["company"] }) => (proofId: number, kind: ProofKind) =>
  signedProofUrl(c.env, publicBase(c), c.get("company").slug, proofId, kind);

/** Mounted at `/<slug>` behind the company and rate-limit middleware. */
export const customerTrackingRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook })
  .openapi(trackingJson, async (c) => {
    const view = await trackingView(c.get("db"), c.get("company").id, c.req.valid("param").token, signer(c));
    if (!view) throw notFound("Tracking link");
    c.header("cache-control", "no-store");
    return c.json(view, 200);
  })
  .get("/t/:token", async (c) => {
    const view = await trackingView(c.get("db"), c.get("company").id, c.req.param("token"), signer(c));
    for (const [name, value] of Object.entries(SERVER_PAGE_HEADERS)) c.header(name, value);
    // Proof images come from this service through signed links: the page's CSP admits them (and still nothing else).
    c.header("content-security-policy", SERVER_PAGE_CSP.replace("img-src data:", `img-src data: ${new URL(publicBase(c)).origin}`));
    return view ? c.html(renderTrackingPage(view), 200) : c.html(renderTrackingNotFound(), 404);
  });

/** Under `/<slug>/api`: dispatchers issue and revoke links. */
export const trackingLinkRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook })
  .openapi(issueLink, async (c) => {
    const company = c.get("company");
    const { delivery_id } = c.req.valid("param");
    await loadDelivery(c.get("db"), company.id, delivery_id);
    const token = await rotateTrackingLink(c.get("db"), company.id, delivery_id);
    return c.json({ token, link: trackingUrl(publicBase(c), company.slug, token) }, 201);
  })
  .openapi(revokeLinks, async (c) => {
    const company = c.get("company");
    const { delivery_id } = c.req.valid("param");
    await loadDelivery(c.get("db"), company.id, delivery_id);
    await revokeTrackingLinks(c.get("db"), company.id, delivery_id);
    return c.body(null, 204);
  });
