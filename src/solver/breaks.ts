import type { FixedBreak, PlannedBreak, Vehicle, WorkedSoFar, WorkingTimeRule } from "./types";

const MIN = 60;
const HOUR = 3600;

/** The figures of the working-time rules (types.ts, `WorkingTimeRule`), in seconds. */
export const RULES = {
  "de-arbzg": {
    /** §4: no more than this much work without a break. */
    maxBlock: 6 * HOUR,
    /** §4: blocks of at least this long count as breaks. */
    minBreak: 15 * MIN,
    /** §4: breaks in all: 30 minutes beyond 6 hours of work, 45 beyond 9. */
    breakAfter: [
      [9 * HOUR, 45 * MIN],
      [6 * HOUR, 30 * MIN],
    ] as const,
    /** §3: at most 10 hours of work a day. */
    maxWork: 10 * HOUR,
  },
  "eu-561": {
    /** Art. 7: no more than 4.5 hours of driving without a break. */
    maxDriving: 4.5 * HOUR,
    /** Art. 7: the break (45 minutes), or its split: 15 first, then 30. */
    fullBreak: 45 * MIN,
    firstPart: 15 * MIN,
    secondPart: 30 * MIN,
    /** Art. 6: at most 9 hours of driving a day. */
    maxDailyDriving: 9 * HOUR,
  },
} as const;

/** Work (de-arbzg) or driving (eu-561) since the last break before waiting at a stop is taken as a break. */
const EARLIEST_WAITING_BREAK = 2 * HOUR;

export const WORKING_TIME_RULES = Object.keys(RULES) as WorkingTimeRule[];

/** Breaks that §4 requires in all for `work` seconds of work. */
export function arbzgBreakFor(work: number): number {
  for (const [after, minutes] of RULES["de-arbzg"].breakAfter) if (work > after) return minutes;
  return 0;
}

/** What the solver keeps of a vehicle's breaks and rules (model.ts). */
export interface BreakRules {
  arbzg: boolean;
  eu561: boolean;
  /** Sorted by window start. */
  fixed: readonly FixedBreak[];
  /** The working day before the tour (`Vehicle.workedSoFar`): zeros when none. */
  soFar: WorkedSoFar;
}

const NOTHING_YET: WorkedSoFar = { work: 0, sinceBreak: 0, breaks: 0, driving: 0, drivingSinceBreak: 0 };

/** The vehicle's breaks and rules, checked; null when it has none (then tours are timed as before). */
export function breakRulesOf(v: Vehicle): BreakRules | null {
  const rules = v.workingTimeRules ?? [];
  for (const r of rules) if (!(r in RULES)) throw new Error(`vehicle ${v.id}: unknown working-time rule "${String(r)}": expected one of ${WORKING_TIME_RULES.join(", ")}`);
  const fixed = [...(v.breaks ?? [])].sort((a, b) => a.window.start - b.window.start);
  const ids = new Set<string>();
  for (const b of fixed) {
    if (!(b.window.start <= b.window.end) || !(b.duration >= 0)) throw new Error(`vehicle ${v.id}: break ${b.id} needs window.start <= window.end and a duration >= 0`);
    if (ids.has(b.id)) throw new Error(`vehicle ${v.id}: break id ${b.id} given twice`);
    ids.add(b.id);
  }
  const soFar = v.workedSoFar ?? NOTHING_YET;
  for (const [key, value] of Object.entries(soFar)) if (!(Number.isFinite(value) && value >= 0)) throw new Error(`vehicle ${v.id}: workedSoFar.${key} must be a number >= 0`);
  if (rules.length === 0 && fixed.length === 0) return null;
  return { arbzg: rules.includes("de-arbzg"), eu561: rules.includes("eu-561"), fixed, soFar };
}

/**
 * Time the search keeps free for breaks at the end of a tour that may last
 * `span` seconds: the search times tours without breaks (its O(1) move
 * evaluation has no place for them), so it plans every tour that much
 * shorter, and the timetable then places the breaks exactly (`BreakClock`);
 * a tour that still cannot be made legal is repaired (solve.ts). The
 * smallest reserve r whose shorter tour needs no more than r of breaks.
 */
export function breakReserve(rules: BreakRules, span: number, shiftStart: number, shiftEnd: number): number {
  let fixed = 0;
  for (const b of rules.fixed) if (b.window.end >= shiftStart && b.window.start <= shiftEnd) fixed += b.duration;
  // The day so far counts: its work towards what is owed, its breaks against it.
  const { soFar } = rules;
  const needed = (work: number) => {
    let r = 0;
    if (rules.arbzg) r = Math.max(r, arbzgBreakFor(work + soFar.work) - soFar.breaks, soFar.sinceBreak + work > RULES["de-arbzg"].maxBlock ? RULES["de-arbzg"].minBreak : 0);
    if (rules.eu561 && soFar.drivingSinceBreak + work > RULES["eu-561"].maxDriving) r = Math.max(r, RULES["eu-561"].fullBreak);
    return r;
  };
  const free = span - fixed;
  for (const r of [0, 15 * MIN, 30 * MIN, 45 * MIN]) if (needed(free - r) <= r) return fixed + r;
  return fixed + 45 * MIN;
}

/**
 * Places breaks while a tour is timed, activity by activity (schedule.ts):
 * a break is taken while waiting for a window when one is owed, and
 * otherwise as late as the rules allow: before the service or inside the
 * leg that would pass a limit, or as soon as a fixed break's window opens.
 * `excess` sums, in seconds, by how much the tour breaks a rule that
 * placement cannot mend (10 hours of work, 9 of driving, a fixed break's
 * window passed); the caller adds lateness at windows and shift end.
 */
export class BreakClock {
  readonly breaks: PlannedBreak[] = [];
  /** Seconds of breaks planned so far. */
  breakSeconds = 0;
  excess = 0;
  private block = 0;
  private work = 0;
  private breakTime = 0;
  private driving = 0;
  private split = false;
  private totalDriving = 0;
  private nextFixed = 0;
  /** Breaks §4 requires in all, from the tour's length without breaks (never less than it will need). */
  private readonly arbzgOwed: number;

  constructor(
    private readonly rules: BreakRules,
    projectedWork: number,
    start: number,
  ) {
    // A tour under way goes on with the day so far.
    const { soFar } = rules;
    this.work = soFar.work;
    this.block = soFar.sinceBreak;
    this.breakTime = soFar.breaks;
    this.totalDriving = soFar.driving;
    this.driving = soFar.drivingSinceBreak;
    this.arbzgOwed = rules.arbzg ? arbzgBreakFor(projectedWork + soFar.work) : 0;
    // A fixed break whose window closed before the tour starts is never reached.
    while (rules.fixed[this.nextFixed]?.window.end < start) this.nextFixed++;
  }

  /** Drives `seconds` from `t` to stop `stop` (0-based); returns the arrival, breaks on the way included. */
  drive(t: number, seconds: number, stop: number): number {
    let left = seconds;
    const where = () => (left === seconds ? "after-service" : "on-the-way");
    for (;;) {
      let part = left;
      const arbzg = this.rules.arbzg && this.block + part > RULES["de-arbzg"].maxBlock;
      if (arbzg) part = Math.max(0, RULES["de-arbzg"].maxBlock - this.block);
      const eu = this.rules.eu561 && this.driving + part > RULES["eu-561"].maxDriving;
      if (eu) part = Math.max(0, RULES["eu-561"].maxDriving - this.driving);
      const fixed = this.rules.fixed[this.nextFixed];
      // A fixed break whose window opens before this part of the leg ends starts when it opens.
      if (fixed && (fixed.window.start < t + part || (fixed.window.start <= t && part === 0))) {
        const at = Math.max(0, fixed.window.start - t);
        this.account(at, at);
        t += at;
        left -= at;
        t = this.take(t, fixed.duration, fixed.id, stop, where());
        continue;
      }
      this.account(part, part);
      t += part;
      left -= part;
      if (!arbzg && !eu) return t;
      t = this.take(t, this.ruleBreak(eu), this.ruleName(eu), stop, where());
    }
  }

  /**
   * Arrived at stop `stop` at `t`, service may start at `open`: takes a break owed (or a
   * fixed break whose window opens) in the waiting. Returns when service may
   * start; breaks may end after `open`.
   */
  wait(t: number, open: number, stop: number): number {
    const fixed = this.rules.fixed[this.nextFixed];
    if (fixed && fixed.window.start <= open && fixed.window.end >= t) {
      const at = Math.max(t, fixed.window.start);
      this.account(at - t, 0);
      const end = this.take(at, fixed.duration, fixed.id, stop, "before-service");
      return this.wait(end, Math.max(open, end), stop);
    }
    const w = open - t;
    let length = 0;
    let eu = false;
    // Not right after a break: a break taken in the first hours of a block leaves the rest of the block to need another.
    if (this.rules.arbzg && this.block >= EARLIEST_WAITING_BREAK && this.arbzgOwed > this.breakTime && w >= RULES["de-arbzg"].minBreak) {
      length = Math.min(w, Math.max(RULES["de-arbzg"].minBreak, this.arbzgOwed - this.breakTime));
    }
    if (this.rules.eu561 && this.driving >= EARLIEST_WAITING_BREAK) {
      const need = this.split ? RULES["eu-561"].secondPart : RULES["eu-561"].fullBreak;
      const part = w >= need ? need : !this.split && w >= RULES["eu-561"].firstPart ? w : 0;
      if (part > length) (length = part), (eu = true);
    }
    if (length > 0) {
      t = this.take(t, length, this.ruleName(eu), stop, "before-service");
    }
    this.account(Math.max(0, open - t), 0);
    return Math.max(t, open);
  }

  /** About to serve for `seconds` at `t`; returns when service starts (after a break the rules require first). */
  serve(t: number, seconds: number, stop: number): number {
    const fixed = this.rules.fixed[this.nextFixed];
    if (fixed && fixed.window.start <= t + seconds && fixed.window.end < t + seconds) {
      // Its window closes during the service: take it first (waiting for the window to open if need be).
      const at = Math.max(t, fixed.window.start);
      this.account(at - t, 0);
      t = this.take(at, fixed.duration, fixed.id, stop, "before-service");
    }
    if (this.rules.arbzg && this.block + seconds > RULES["de-arbzg"].maxBlock) {
      t = this.take(t, this.ruleBreak(false), "de-arbzg", stop, "before-service");
    }
    this.account(seconds, 0);
    return t;
  }

  /** After the tour: the limits placement cannot mend. */
  finish(): void {
    if (this.rules.arbzg) {
      this.excess += Math.max(0, this.work - RULES["de-arbzg"].maxWork);
      this.excess += Math.max(0, arbzgBreakFor(this.work) - this.breakTime);
    }
    if (this.rules.eu561) this.excess += Math.max(0, this.totalDriving - RULES["eu-561"].maxDailyDriving);
  }

  private account(work: number, driving: number): void {
    this.block += work;
    this.work += work;
    this.driving += driving;
    this.totalDriving += driving;
  }

  /** Length of a break the rules force now (`eu`: forced by the driving limit). */
  private ruleBreak(eu: boolean): number {
    let length = 0;
    if (this.rules.arbzg) length = Math.max(RULES["de-arbzg"].minBreak, this.arbzgOwed - this.breakTime);
    if (eu) length = Math.max(length, this.split ? RULES["eu-561"].secondPart : RULES["eu-561"].fullBreak);
    return length;
  }

  private ruleName(eu: boolean): string {
    return eu || !this.rules.arbzg ? "eu-561" : "de-arbzg";
  }

  private take(t: number, length: number, id: string, afterStops: number, where: PlannedBreak["where"]): number {
    const fixed = this.rules.fixed[this.nextFixed];
    if (fixed && fixed.window.start <= t) {
      // A rule's break taken while a fixed break is due is that break, made long enough for both.
      if (t > fixed.window.end) this.excess += t - fixed.window.end;
      if (id !== fixed.id) length = Math.max(length, fixed.duration);
      id = fixed.id;
      this.nextFixed++;
    }
    this.breaks.push({ id, start: t, end: t + length, afterStops, where });
    this.breakSeconds += length;
    if (length >= RULES["de-arbzg"].minBreak) {
      this.block = 0;
      this.breakTime += length;
    }
    if (length >= RULES["eu-561"].fullBreak || (this.split && length >= RULES["eu-561"].secondPart)) {
      this.driving = 0;
      this.split = false;
    } else if (length >= RULES["eu-561"].firstPart) this.split = true;
    return t + length;
  }
}
