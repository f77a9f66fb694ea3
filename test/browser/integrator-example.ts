/**
 * What an integrator writes (docs/features/integrations.md, "A typed client"): the generated types
 * with openapi-fetch, 100 deliveries sent idempotently (and the request repeated as after a lost
 * answer), routing started, its end awaited on the live channel, the routes read.
 * test/browser/client.test.ts runs it against a local service.
 */
import createClient from "openapi-fetch";
import type { paths } from "../../src/shared/contract/openapi";

export interface ExampleResult {
  created: number;
  replayed: boolean;
  routes: { id: number; stops: number }[];
}

export async function integratorExample(baseUrl: string, slug: string, login: { email: string; password: string }, day: string): Promise<ExampleResult> {
  const client = createClient<paths>({ baseUrl });
  const auth = await client.POST("/{slug}/auth", { params: { path: { slug } }, body: login });
  if (!auth.data) throw new Error(`login: ${auth.response.status}`);
  client.use({ onRequest: ({ request }) => (request.headers.set("Authorization", `JWT ${auth.data.access_token}`), request) });
  const path = { slug };

  // 1. The night's 100 orders in one request, keyed by the shop's order numbers; the Idempotency-Key makes a retry safe.
  const items = Array.from({ length: 100 }, (_, i) => ({
    external_id: `SHOP-${day}-${i}`,
    contactlastname: `Customer ${i}`,
    city: "Berlin",
    lat: 52.45 + (i % 10) * 0.01,
    lng: 13.3 + Math.floor(i / 10) * 0.02,
    pdt_from: `${day}T07:00:00Z`,
    pdt_to: `${day}T15:00:00Z`,
    load: 1,
  }));
  const send = () => client.POST("/{slug}/api/delivery/bulk", { params: { path, header: { "Idempotency-Key": `night-${day}` } }, body: { items } });
  const sent = await send();
  // The answer was lost on the way, say: the same request again does nothing twice and answers the same.
  const repeated = await send();
  if (!sent.data || !("results" in sent.data) || !repeated.data || !("results" in repeated.data)) throw new Error(`bulk: ${sent.response.status}`);
  const ids = sent.data.results.flatMap((r) => (r.status === "refused" ? [] : [r.id]));

  // 2. Routing in the background, and its end on the live channel (a single-use ticket opens the socket).
  const ticket = await client.POST("/{slug}/api/ws/ticket", { params: { path } });
  if (!ticket.data) throw new Error(`ticket: ${ticket.response.status}`);
  const socket = new WebSocket(ticket.data.url);
  await new Promise((resolve, reject) => ((socket.onopen = resolve), (socket.onerror = reject)));
  const started = await client.POST("/{slug}/api/calcroute/optimized/timewindow", { params: { path, query: { num_vehicles: 4, time_budget_seconds: 2 } }, body: { deliveryids: ids } });
  if (started.response.status !== 202 || !started.data || !("process_id" in started.data)) throw new Error(`routing: ${started.response.status}`);
  const processId = started.data.process_id;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("no end of routing on the live channel")), 60_000);
    socket.onmessage = (message) => {
      const event = JSON.parse(String(message.data));
      if (event.type !== "process" || event.process_id !== processId || event.action !== "final") return;
      if (event.status === "finished" || event.status === "failed") (clearTimeout(timer), event.status === "finished" ? resolve() : reject(new Error(`routing failed: ${event.meta}`)));
    };
  });
  socket.close();

  // 3. The routes the run wrote, with their stops.
  const q = JSON.stringify({ filters: [{ name: "status", op: "eq", val: 0 }] }); // new: planned, no driver yet
  const routes = await client.GET("/{slug}/api/route", { params: { path, query: { q } } });
  if (!routes.data || !("objects" in routes.data)) throw new Error(`routes: ${routes.response.status}`);
  return {
    created: sent.data.num_created,
    replayed: repeated.response.headers.get("Idempotent-Replayed") === "true",
    routes: routes.data.objects.map((r) => ({ id: r.id, stops: r.deliveries?.length ?? 0 })),
  };
}
