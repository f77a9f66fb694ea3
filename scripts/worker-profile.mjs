/**
 * CPU profile of the worker isolate of a local `wrangler dev` (started with
 * `--inspector-port`) over the devtools protocol, while `fn` runs.
 * Answers fn's result, the isolate's busy time (ms; samples that were not
 * idle) and the functions with the most self time.
 */
const SAMPLE_US = 200;

export async function profileWorker(port, fn) {
  // The inspector proxy of wrangler only accepts websockets with a local Origin.
  const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`, { headers: { Origin: `http://127.0.0.1:${port}` } });
  await new Promise((resolve, reject) => {
    ws.onopen = resolve;
    ws.onerror = () => reject(new Error(`no devtools protocol on port ${port}`));
  });
  let next = 0;
  const pending = new Map();
  ws.onmessage = (event) => {
    const message = JSON.parse(event.data);
    pending.get(message.id)?.(message.result);
    pending.delete(message.id);
  };
  const send = (method, params = {}) =>
    new Promise((resolve) => {
      const id = ++next;
      pending.set(id, resolve);
      ws.send(JSON.stringify({ id, method, params }));
    });
  await send("Profiler.enable");
  await send("Profiler.setSamplingInterval", { interval: SAMPLE_US });
  await send("Profiler.start");
  const result = await fn();
  const { profile } = await send("Profiler.stop");
  ws.close();

  const self = new Map();
  let busy = 0;
  for (const node of profile.nodes) {
    const { functionName, url, lineNumber } = node.callFrame;
    const hits = node.hitCount ?? 0;
    if (functionName === "(idle)") continue;
    busy += hits;
    const key = `${functionName || "(anonymous)"}${url ? ` ${url.split("/").pop()}:${lineNumber + 1}` : ""}`;
    self.set(key, (self.get(key) ?? 0) + hits);
  }
  const top = [...self].sort((a, b) => b[1] - a[1]).slice(0, 6).map(([name, hits]) => ({ name, share: hits / busy }));
  return { result, busyMs: (busy * SAMPLE_US) / 1000, top };
}
