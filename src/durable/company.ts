/**
 * One Durable Object per company (named by the company id): it serialises the
 * company's state transitions, hosts routing-process status, and holds the
 * dispatchers' and drivers' websockets (hibernation API, so connections
 * survive eviction). A thin RPC surface (`CompanyCoordinatorRpc` in
 * src/core/coordinator/rpc.ts documents each method): each concern lives in a
 * module beside it (src/durable/README.md).
 */
import { DurableObject } from "cloudflare:workers";
import type { RoutingJob } from "../core/queues";
import type { AttemptKind, AttemptOutcome, AttemptSubjects, AttemptVerdict } from "../core/coordinator/login-throttle";
import type { FanOutPart, PartTours, PartsPlan } from "../core/coordinator/parts";
import type { ProcessAction, ProcessState, ProcessUpdate } from "../core/coordinator/processes";
import type { CompanyCoordinatorRpc, WsTicketHolder } from "../core/coordinator/rpc";
import type { AuthUser } from "../core/context";
import type { Env } from "../core/env";
import type { LifecycleOp, LifecycleOutcome } from "../core/coordinator/changes";
import type { PublishedEvent } from "../core/coordinator/live";
import { arm } from "./alarms";
import { ChangeQueue } from "./changes";
import { EtaRefresh } from "./eta-refresh";
import { EventOutbox } from "./event-outbox";
import { Host } from "./host";
import { LiveChannel } from "./live";
import { LoginThrottle } from "./login-throttle";
import { PlanParts } from "./parts";
import { WsTickets } from "./ws-tickets";
import { Processes } from "./processes";

export class CompanyCoordinator extends DurableObject<Env> implements CompanyCoordinatorRpc {
  private readonly host: Host;
  private readonly live: LiveChannel;
  private readonly etas: EtaRefresh;
  private readonly changes: ChangeQueue;
  private readonly outbox: EventOutbox;
  private readonly processes: Processes;
  private readonly parts: PlanParts;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.host = new Host(ctx, env);
    this.live = new LiveChannel(this.host);
    this.etas = new EtaRefresh(this.host, this.live);
    this.changes = new ChangeQueue(this.host, this.live, this.etas);
    this.outbox = new EventOutbox(this.host, this.live);
    this.processes = new Processes(this.host, this.live, this.outbox, (pid) => this.parts.drop(pid));
    this.parts = new PlanParts(this.host, this.processes);
  }

  async applyChange(op: LifecycleOp): Promise<LifecycleOutcome> {
    return this.changes.apply(op);
  }

  /** Whatever is due: process events to log, overdue processes, plans in parts, the ETA refresh, pruning; then the alarm for the next due time. */
  override async alarm(): Promise<void> {
    const now = Date.now();
    await this.outbox.run(now);
    await this.processes.checkDeadlines(now);
    await this.parts.checkDeadlines(now);
    await this.etas.run(now);
    await this.processes.prune(now);
    await arm(this.ctx.storage);
  }

  /** Websocket upgrade; the worker authenticated the user and passes who it is. */
  override async fetch(request: Request): Promise<Response> {
    return this.live.accept(request);
  }

  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    await this.live.message(ws, message);
  }

  override async webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    this.live.close(ws, code, reason);
  }

  async broadcast(published: PublishedEvent): Promise<number> {
    return this.live.broadcast(published);
  }

  async endSessions(userId: number): Promise<number> {
    return this.live.endSessions(userId);
  }

  async webhooksChanged(): Promise<void> {
    this.live.webhooksChanged();
  }

  async createProcess(processId: string, state: ProcessState, watch?: { job: RoutingJob; deadline: number }): Promise<void> {
    await this.processes.create(processId, state, watch);
  }

  async getProcess(processId: string): Promise<ProcessState | null> {
    return this.processes.get(processId);
  }

  async updateProcess(processId: string, action: ProcessAction, update: ProcessUpdate): Promise<ProcessState | null> {
    return this.processes.update(processId, action, update);
  }

  async claimRouting(processId: string, attempt: string, deadline?: number): Promise<boolean> {
    return this.processes.claim(processId, attempt, deadline);
  }

  async holdsClaim(processId: string, attempt: string): Promise<boolean> {
    return this.processes.holdsClaim(processId, attempt);
  }

  async beginWrite(processId: string, attempt: string): Promise<boolean> {
    return this.processes.beginWrite(processId, attempt);
  }

  async cancelProcess(processId: string, by: { userId: number }): Promise<{ ok: true; state: ProcessState } | { ok: false; status: 404 | 409; message: string }> {
    return this.processes.cancel(processId, by);
  }

  async noteFailedAttempt(processId: string, error: string): Promise<void> {
    await this.processes.noteFailedAttempt(processId, error);
  }

  async failProcess(processId: string, reason: string): Promise<ProcessState | null> {
    return this.processes.fail(processId, reason);
  }

  async startParts(processId: string, attempt: string, parts: FanOutPart[], plan: PartsPlan): Promise<boolean> {
    return this.parts.start(processId, attempt, parts, plan);
  }

  async partWanted(processId: string, attempt: string, partId: number): Promise<boolean> {
    return this.parts.wanted(processId, attempt, partId);
  }

  async submitPart(processId: string, attempt: string, partId: number, tours: PartTours | null): Promise<boolean> {
    return this.parts.submit(processId, attempt, partId, tours);
  }

  async partsForMerge(processId: string, attempt: string): Promise<{ parts: FanOutPart[]; results: { id: number; tours: PartTours }[] } | null> {
    return this.parts.forMerge(processId, attempt);
  }

  beginAttempt(kind: AttemptKind, subjects: AttemptSubjects): AttemptVerdict {
    return this.loginThrottle().begin(kind, subjects);
  }

  endAttempt(kind: AttemptKind, subjects: AttemptSubjects, outcome: AttemptOutcome): void {
    this.loginThrottle().end(kind, subjects, outcome);
  }

  issueWsTicket(user: AuthUser, tokenIssuedMs: number): string {
    return this.wsTickets().issue(user, tokenIssuedMs);
  }

  redeemWsTicket(ticket: string): WsTicketHolder | null {
    return this.wsTickets().redeem(ticket);
  }

  private tickets?: WsTickets;
  private wsTickets(): WsTickets {
    return (this.tickets ??= new WsTickets(this.ctx.storage.sql));
  }

  /** Created on first use: most calls to the object never touch the throttle's table. */
  private throttle?: LoginThrottle;
  private loginThrottle(): LoginThrottle {
    return (this.throttle ??= new LoginThrottle(this.ctx.storage.sql));
  }

  async connections(): Promise<{ staff: number; drivers: number }> {
    return this.live.connections();
  }
}
