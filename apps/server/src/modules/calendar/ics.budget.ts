// The budgets of a calendar's events() calls: a series is priced in RRULE steps and in wall time, per
// try and per call; a series that runs over is skipped from then on, and so are the ones that spent
// a call, so the next call is not spent on them again.

/** The clock the time budgets read (milliseconds): performance.now, or a test's controlled clock. */
export type BudgetClock = () => number;

/** RRULE steps one event may take for one window: a FREQ=SECONDLY rule or an impossible one is skipped. */
const EVENT_STEPS = 50_000;
/** RRULE steps one events() call may take over all events, so a hostile feed cannot hold the server. */
const CALL_STEPS = 250_000;
/** Wall time one events() call may spend, singles and series together (a series cut off by it is not tried again). */
const CALL_MS = 1000;
/**
 * Wall time one series may take in one call; past it twice running, it is skipped from then on. Real
 * series take under 5 ms, the slowest real ones measured (COUNT rules with BY parts begun years ago)
 * up to 60 ms; a pause of the process must not cost a user their weekly meeting either.
 */
const SERIES_MS = 100;
/** Calls that may run out of their budget while series are still untried; then the untried ones are skipped for good. */
const SPENT_CALLS_MAX = 3;

/** A budget ran out; thrown through ical.js's iterator to stop it. */
export class Overrun extends Error {}
/** A series (or the VTIMEZONEs) over its step limit. */
export class OutOfSteps extends Overrun {}
/** A series over its time limit in one call. */
class TooSlow extends Overrun {}
/** The events() call over its step or time limit. */
class CallSpent extends Overrun {}

/** What the budgets keep on a series between calls. */
export interface Priced {
  /** Ran over its limits, or unreadable; not expanded again. */
  broken: boolean;
  /** Expanded within its limits at least once. */
  proven: boolean;
}

/** Told of every step of a series' expansion; throws an Overrun to stop it. */
export type Spend = (n: number) => void;

/** The budgets of one calendar's `series`, over all its events() calls. */
export function createSeriesBudget<T extends Priced>(series: T[], now: BudgetClock) {
  /** Calls that ran out of their budget while expanding series. */
  let spentCalls = 0;

  /** The series that used the most of a call cut off, and past a few such calls the untried ones. */
  function penalise(costs: { item: T; ms: number; steps: number }[]) {
    // The series that used the most of this call are skipped from now on, so the next call is not
    // spent on the same ones again: what stays of this call's work is under half its budget.
    spentCalls++;
    const share = Math.max(1, costs.length) * 2;
    for (const c of costs) {
      if (c.ms >= CALL_MS / share || c.steps >= CALL_STEPS / share) c.item.broken = true;
    }
    // Still over after a few calls: only series that fit so far are expanded again.
    if (spentCalls >= SPENT_CALLS_MAX) {
      for (const item of series) if (!item.proven) item.broken = true;
    }
  }

  /** One events() call's budget, from now. */
  function call() {
    const deadline = now() + CALL_MS;
    let callSteps = CALL_STEPS;

    /** The spending of one try at a series, which has taken `spent.steps` so far. */
    const spender = (spent: { steps: number }): Spend => {
      const begun = now();
      return (n) => {
        spent.steps += n;
        callSteps -= n;
        if (spent.steps > EVENT_STEPS) throw new OutOfSteps();
        if (callSteps < 0) throw new CallSpent();
        const at = now();
        if (at > deadline) throw new CallSpent();
        if (at - begun > SERIES_MS) throw new TooSlow();
      };
    };

    /**
     * The hits of the series that fit in what is left of the call, by `expand` (one try at a series:
     * its hits, or an Overrun or ical.js's error thrown). `timeLeft` is false when the singles took it all.
     */
    function expandSeries<H>(expand: (item: T, spend: Spend) => H[], timeLeft: boolean): H[] {
      const hits: H[] = [];
      const costs: { item: T; ms: number; steps: number }[] = [];
      let ran = false;
      let cutOff = false;
      const run = (item: T) => {
        ran = true;
        for (let tries = 1; ; tries++) {
          const begun = now();
          const spent = { steps: 0 };
          try {
            for (const h of expand(item, spender(spent))) hits.push(h);
            item.proven = true;
            costs.push({ item, ms: now() - begun, steps: spent.steps });
            return;
          } catch (err) {
            // Slow once may be a pause of the process (a collection, another thread): one more try.
            if (err instanceof TooSlow && tries < 2) continue;
            // Over its limits, unreadable, or running when the call's budget ran out: skipped from now on.
            item.broken = true;
            if (err instanceof CallSpent) cutOff = true;
            return;
          }
        }
      };
      // Series that fitted before go first, so new expensive ones cannot crowd them out.
      for (const proven of [true, false]) {
        for (const item of series) {
          if (cutOff || !timeLeft) break;
          if (item.broken || item.proven !== proven) continue;
          if (now() > deadline) {
            // Out of time between two series: their fault, unless the singles took it all.
            cutOff = ran;
            timeLeft = false;
            break;
          }
          run(item);
        }
      }
      if (cutOff) penalise(costs);
      return hits;
    }

    return {
      /** Whether the call's time is up. */
      overdue: () => now() > deadline,
      expandSeries,
    };
  }

  return { call };
}
