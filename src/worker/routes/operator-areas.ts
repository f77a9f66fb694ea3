/** Operator import of real postal-code polygons (mounted under /_operator, behind the operator token). */
import { OpenAPIHono, createRoute, z } from "@hono/zod-openapi";
import { ImportResultSchema, PostalAreaImportBody } from "../schemas/areas";
import type { AppEnv } from "../app-env";
import { validationHook } from "../errors";
import { envForShard, shardCount } from "../../core/db/shards";
import { operatorAuth } from "../middleware/operator";
import { BooleanQuery, errorResponses, jsonBody, jsonResponse } from "../openapi";
import { importPostalAreas, prepareImportRows } from "../../core/services/area-import";

const importAreas = createRoute({
  method: "post",
  path: "/postal-areas",
  operationId: "importPostalAreas",
  tags: ["Operator"],
  summary: "Import postal-code polygons",
  description:
    "A GeoJSON FeatureCollection; each feature has the postal code in `properties.plz` (or `postcode` / `PLZ`), an optional `properties.note` " +
    "and a Polygon or MultiPolygon geometry (rings are closed when left open). Features become areas with `source = 'imported'`. " +
    "The import supersedes existing areas (derived or imported) of its postal codes; `replace=true` also removes every derived (Voronoi) area. " +
    "Tour-area memberships of superseded areas move to the new areas of the same postal code and those tour areas get their geometry recomputed; " +
    "a superseded area still used by a tour area without a new counterpart is kept. All or nothing. " +
    "The request body is limited to 5 MB: send large datasets in several requests, all features of one postal code in the same request, " +
    "and `replace=true` with the last one (`npm run operator -- import-areas` does this).",
  security: [{ Operator: [] }],
  request: {
    query: z.object({ replace: BooleanQuery.optional().openapi({ description: "Also remove every derived area (default false)" }) }),
    body: jsonBody(PostalAreaImportBody),
  },
  responses: {
    200: jsonResponse(ImportResultSchema, "Import result"),
    403: errorResponses[403],
    413: { description: "Body larger than 5 MB", content: { "application/json": { schema: errorResponses[422].content["application/json"].schema } } },
    422: errorResponses[422],
  },
});

export const operatorAreaRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
// The operator router guards everything under /_operator already; repeated here so this module is safe wherever it is mounted.
operatorAreaRoutes.use("/postal-areas", operatorAuth);
operatorAreaRoutes.openapi(importAreas, async (c) => {
  const rows = prepareImportRows(c.req.valid("json"));
  // Reference data lives on every shard, the same rows with the same ids: each shard imports the same rows in the same order.
  const replace = c.req.valid("query").replace ?? false;
  const result = await importPostalAreas(c.env.DB, rows, replace);
  for (let shard = 1; shard < shardCount(c.env); shard++) await importPostalAreas(envForShard(c.env, shard).DB, rows, replace);
  return c.json(result, 200);
});
