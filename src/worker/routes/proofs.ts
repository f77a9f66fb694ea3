/**
 * Proof of delivery (beyond the interface documents): photo, signature and
 * recipient of a delivery's report, read by the company's users, deleted by
 * dispatchers; and the signed image links of the customer's tracking page.
 */
import { OpenAPIHono, createRoute, z } from "@hono/zod-openapi";
import { ProofSchema } from "../schemas/proofs";
import { ApiError, notFound, unprocessable } from "../../core/errors";
import type { AppEnv } from "../app-env";
import { validationHook } from "../errors";
import { allOnOnePage } from "../../core/db/list";
import { ALL_ROLES, IdParam, apiRoute, envelope, errorResponses, jsonResponse } from "../openapi";
import { publishAll } from "../../core/services/live";
import { FAR_FROM_ADDRESS_METERS, PROOF_LIMITS, PROOF_LINK_SECONDS, type ProofKind, checkedUpload, deleteProof, findProof, listProofs, presentProof, proofImage, publicProof, saveProofUpload, verifyProofLink } from "../../core/services/proofs";
import { apiBase } from "./company";

const KiB = 1024;
const BEYOND = "Beyond the interface documents (dispatch-api.md has the `ata`, `atd`, `drivernotes` and `scancode` fields of a report, no proof of delivery).";
const ACCESS = "Dispatchers and watchers see every proof of the company; a driver only those of routes they drive (403 otherwise); another company's delivery is unknown (404).";
const LIMITS =
  `Limits: photo at most ${PROOF_LIMITS.photoBytes / KiB / KiB} MiB and ${PROOF_LIMITS.photoMaxSide} px on a side, signature at most ${PROOF_LIMITS.signatureBytes / KiB} KiB and ${PROOF_LIMITS.signatureMaxSide} px ` +
  "(413 beyond the size, 422 beyond the dimensions). The type is read from the bytes, not the declared one: JPEG, PNG or WebP, anything else is a 422. " +
  "Location metadata is removed before storing: a JPEG's APP1 (EXIF, XMP) and APP13 segments and a PNG's text and eXIf chunks are cut out; a WebP carrying EXIF or XMP is refused (422). " +
  "The driver app scales photos to 1,600 px on the longest side (JPEG) in the browser, which drops all metadata, before it sends them.";

const ProofParams = z.object({
  delivery_id: z.coerce.number().int().positive().openapi({ param: { name: "delivery_id", in: "path" }, example: 1 }),
  proof_id: z.coerce.number().int().positive().openapi({ param: { name: "proof_id", in: "path" }, example: 1 }),
});

const ProofForm = z
  .object({
    photo: z.any().optional().openapi({ type: "string", format: "binary", maxLength: PROOF_LIMITS.photoBytes, description: "Photo of the delivery at the door (JPEG, PNG or WebP)" }),
    signature: z.any().optional().openapi({ type: "string", format: "binary", maxLength: PROOF_LIMITS.signatureBytes, description: "The recipient's signature as drawn (PNG)" }),
    recipient: z.string().max(PROOF_LIMITS.recipientChars).optional().openapi({ description: "Name of the person who received the delivery" }),
  })
  .openapi("DeliveryProofForm");

const addProof = apiRoute({
  method: "post",
  path: "/delivery/{delivery_id}/proof",
  operationId: "createProof",
  tags: ["Proof of delivery"],
  summary: "Add a photo, signature or recipient to a delivery's proof",
  description:
    `${BEYOND} Multipart form with \`photo\`, \`signature\` and/or \`recipient\` (at least one). The proof belongs to the delivery's report on its current route: ` +
    "allowed while the route is on the way (before the report, as the driver app does, or after it) and on a finished route for a delivery it reported (409 otherwise). " +
    "A new photo or signature replaces the previous one. Drivers add proofs to their own routes' deliveries, dispatchers to any. When the delivery is already reported, " +
    `a \`delivery\` event (websocket, \`delivery.updated\` webhook) carries \`proof\` (what it holds, never the images). ${LIMITS}`,
  roles: ["dispatcher", "driver"],
  request: { params: IdParam("delivery_id"), body: { required: true, content: { "multipart/form-data": { schema: ProofForm } } } },
  responses: { 200: jsonResponse(ProofSchema, "The proof record"), 413: { description: "A file larger than its limit", content: errorResponses[422].content } },
});

const getProofs = apiRoute({
  method: "get",
  path: "/delivery/{delivery_id}/proof",
  operationId: "listProofs",
  tags: ["Proof of delivery"],
  summary: "The proofs of a delivery",
  description:
    `${BEYOND} One record per route the delivery was reported on, newest first: recipient, the report's time and position (\`far_from_address\` beyond ${FAR_FROM_ADDRESS_METERS} m), ` +
    `the code scanned at the door and whether it matched, and absolute API links of the photo and signature. ${ACCESS}`,
  roles: ALL_ROLES,
  request: { params: IdParam("delivery_id") },
  responses: { 200: jsonResponse(envelope(ProofSchema, "DeliveryProofList"), "The proofs") },
});

const imageRoute = (kind: ProofKind) =>
  apiRoute({
    method: "get",
    path: `/delivery/{delivery_id}/proof/{proof_id}/${kind}`,
    operationId: `getProof${kind[0].toUpperCase()}${kind.slice(1)}`,
    tags: ["Proof of delivery"],
    summary: `The ${kind} of a proof of delivery`,
    description: `${BEYOND} The image as stored (metadata removed), \`Cache-Control: private, no-store\`. ${ACCESS} 404 when the proof has no ${kind}.`,
    roles: ALL_ROLES,
    request: { params: ProofParams },
    responses: { 200: { description: "The image", content: { "image/jpeg": { schema: z.string().openapi({ format: "binary" }) }, "image/png": { schema: z.string().openapi({ format: "binary" }) }, "image/webp": { schema: z.string().openapi({ format: "binary" }) } } } },
  });

const getPhoto = imageRoute("photo");
const getSignature = imageRoute("signature");

const removeProof = apiRoute({
  method: "delete",
  path: "/delivery/{delivery_id}/proof/{proof_id}",
  operationId: "deleteProof",
  tags: ["Proof of delivery"],
  summary: "Delete a proof of delivery (dispatchers)",
  description:
    `${BEYOND} The record and its images are deleted at once (privacy requests). The deletion is logged: a \`delivery\` event in the event log (websocket, \`delivery.updated\` webhook) ` +
    "with `proof: null` and `proof_deleted: {id, by, at}` (the dispatcher's user id), and a line in the structured log.",
  request: { params: ProofParams },
  responses: { 204: { description: "Deleted" } },
});

const imageHeaders = (type: string) => ({ "content-type": type, "cache-control": "private, no-store", "x-content-type-options": "nosniff", "content-security-policy": "default-src 'none'; sandbox" });

async function serveImage(c: { env: AppEnv["Bindings"]; body: (data: ReadableStream, status: 200, headers: Record<string, string>) => Response }, proof: Parameters<typeof proofImage>[1], kind: ProofKind) {
  const image = await proofImage(c.env, proof, kind);
  if (!image) throw notFound(kind === "photo" ? "Photo" : "Signature");
  return c.body(image.body, 200, imageHeaders(image.type));
}

/** Under `/<slug>/api`. */
export const proofRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook })
  .openapi(addProof, async (c) => {
    const declared = Number(c.req.header("content-length") ?? 0);
    const most = PROOF_LIMITS.photoBytes + PROOF_LIMITS.signatureBytes + 64 * KiB;
    if (declared > most) throw new ApiError(413, `A proof upload is at most ${Math.round(most / KiB)} KiB`, "photo");
    let form: FormData;
    try {
      form = await c.req.formData();
    } catch {
      throw unprocessable("The body must be multipart/form-data", "photo");
    }
    const recipient = form.get("recipient");
    if (recipient !== null && (typeof recipient !== "string" || recipient.length > PROOF_LIMITS.recipientChars)) throw unprocessable(`recipient is text of at most ${PROOF_LIMITS.recipientChars} characters`, "recipient");
    const photo = await checkedUpload(form.get("photo"), "photo");
    const signature = await checkedUpload(form.get("signature"), "signature");
    if (!photo && !signature && recipient === null) throw unprocessable("Send a photo, a signature or the recipient", "photo,signature,recipient");
    const company = c.get("company");
    const { proof, events } = await saveProofUpload(c.env, c.get("db"), company, c.get("user"), c.req.valid("param").delivery_id, {
      photo,
      signature,
      recipient: typeof recipient === "string" ? recipient.trim() || undefined : undefined,
    });
    if (events.length) c.executionCtx.waitUntil(publishAll(c.env, company.id, events));
    return c.json(presentProof(proof, apiBase(c)), 200);
  })
  .openapi(getProofs, async (c) => {
    const rows = await listProofs(c.get("db"), c.get("company").id, c.get("user"), c.req.valid("param").delivery_id);
    return c.json(allOnOnePage(rows.map((r) => presentProof(r, apiBase(c)))), 200);
  })
  .openapi(getPhoto, async (c) => {
    const { delivery_id, proof_id } = c.req.valid("param");
    return serveImage(c, await findProof(c.get("db"), c.get("company").id, c.get("user"), delivery_id, proof_id), "photo") as never;
  })
  .openapi(getSignature, async (c) => {
    const { delivery_id, proof_id } = c.req.valid("param");
    return serveImage(c, await findProof(c.get("db"), c.get("company").id, c.get("user"), delivery_id, proof_id), "signature") as never;
  })
  .openapi(removeProof, async (c) => {
    const company = c.get("company");
    const { delivery_id, proof_id } = c.req.valid("param");
    const events = await deleteProof(c.env, c.get("db"), company, c.get("user"), delivery_id, proof_id);
    c.executionCtx.waitUntil(publishAll(c.env, company.id, events));
    return c.body(null, 204);
  });

const signedImage = createRoute({
  method: "get",
  path: "/proofimage/{proof_id}/{kind}",
  operationId: "getSignedProofImage",
  security: [],
  tags: ["Customer tracking"],
  summary: "A proof image through a signed link (no login)",
  description:
    `${BEYOND} The links the customer's tracking page shows when the company has \`proof_on_tracking_page\` on: HMAC-signed, valid ${PROOF_LINK_SECONDS / 60} minutes (the page signs anew at each reload). ` +
    "An expired or altered link, or a company that turned the setting off, is a 404.",
  request: {
    params: z.object({ proof_id: z.coerce.number().int().positive().openapi({ param: { name: "proof_id", in: "path" } }), kind: z.enum(["photo", "signature"]).openapi({ param: { name: "kind", in: "path" } }) }),
    query: z.object({ expires: z.coerce.number().int(), sig: z.string().max(128) }),
  },
  responses: { 200: { description: "The image", content: { "image/jpeg": { schema: z.string().openapi({ format: "binary" }) } } }, 404: errorResponses[404], 422: errorResponses[422], 429: errorResponses[429] },
});

/** Mounted at `/<slug>` behind the company and rate-limit middleware. */
export const proofImageRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook }).openapi(signedImage, async (c) => {
  const company = c.get("company");
  const { proof_id, kind } = c.req.valid("param");
  const { expires, sig } = c.req.valid("query");
  const proof = (await verifyProofLink(c.env, company.slug, proof_id, kind, expires, sig)) ? await publicProof(c.get("db"), company.id, proof_id) : null;
  if (!proof) throw notFound("Image");
  return serveImage(c, proof, kind) as never;
});
