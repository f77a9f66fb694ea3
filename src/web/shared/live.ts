/**
 * The company's websocket. Browsers cannot set headers on a websocket, so
 * each (re)connect asks `POST /ws/ticket` for a single-use ticket and opens
 * the URL it answers (the access token never travels in a URL).
 * Reconnects with exponential backoff after a drop and asks the page to
 * re-sync (refetch) on every (re)connect, so no missed event is lost.
 * A socket closed because its token was revoked is not reopened.
 */
import { type LiveMessage, TOKEN_REVOKED, type WsTicket } from "../../shared/contract/live";
import { type Api, SessionExpired } from "./api";

export type LiveState = "connecting" | "online" | "offline";

const PING_MS = 25_000;
const MAX_BACKOFF_MS = 15_000;

export class LiveSocket {
  private ws: WebSocket | null = null;
  private attempts = 0;
  private timer: number | undefined;
  private ping: number | undefined;
  private stopped = false;

  constructor(
    private readonly api: Api,
    /** Every message of the socket: the events, and the answers to this client's own messages (`pong`, ...). */
    private readonly onMessage: (message: LiveMessage) => void,
    private readonly onState: (state: LiveState) => void,
    /** Called after each successful (re)connect: refetch what may have been missed. */
    private readonly onSync: () => void,
  ) {
    void this.connect();
  }

  private async connect() {
    this.onState("connecting");
    let ticket: WsTicket;
    try {
      ticket = await this.api.send("POST", "/ws/ticket");
    } catch (err) {
      if (this.stopped) return;
      this.onState("offline");
      // The token no longer holds: as a revoked socket, the page's refetch meets the 403 and asks for a login.
      if (err instanceof SessionExpired) this.revoked();
      else this.retry();
      return;
    }
    if (this.stopped) return;
    const ws = new WebSocket(ticket.url);
    this.ws = ws;
    ws.onopen = () => {
      const reconnect = this.attempts > 0;
      this.attempts = 0;
      this.onState("online");
      this.ping = window.setInterval(() => ws.readyState === WebSocket.OPEN && ws.send('{"type":"ping"}'), PING_MS);
      if (reconnect) this.onSync();
    };
    ws.onmessage = (m) => {
      try {
        this.onMessage(JSON.parse(String(m.data)) as LiveMessage);
      } catch {
        // Not JSON: not an event of this protocol.
      }
    };
    ws.onclose = (ev) => {
      window.clearInterval(this.ping);
      if (this.stopped) return;
      this.onState("offline");
      // The service ended this user's sessions (e.g. a driver deactivated): reconnecting with the same
      // token cannot work; the page's refetch meets the 403 and the shell asks for a new login.
      if (ev.code === TOKEN_REVOKED.code) this.revoked();
      else this.retry();
    };
  }

  private revoked() {
    this.stopped = true;
    this.onSync();
  }

  /** 0.5 s, 1 s, 2 s, ... up to 15 s, with jitter so many consoles do not reconnect at once. */
  private retry() {
    const delay = Math.min(MAX_BACKOFF_MS, 500 * 2 ** this.attempts++) * (0.75 + Math.random() * 0.5);
    this.timer = window.setTimeout(() => void this.connect(), delay);
  }

  close() {
    this.stopped = true;
    window.clearTimeout(this.timer);
    window.clearInterval(this.ping);
    this.ws?.close();
  }
}
