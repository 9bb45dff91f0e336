/**
 * Contenders for virtual time (parts 1, 2 and 4). A contender is a name plus a factory for an
 * instance that schedules a workload, runs it, and optionally cancels part of it. Add a row to
 * every virtual-time table by writing one such object and listing it in `virtualContenders`
 * (src/contenders/index.ts).
 */

/** The job every task runs: one shared no-op, so no per-task closure is ever retained. */
export type Job = () => void
export const noop: Job = () => {}

/** N one-shot tasks, scheduled at time 0 with these delays (integer ms), then run up to `end`. */
export interface Workload {
  readonly n: number
  readonly delays: Float64Array
  /** Run until this time: the largest delay. */
  readonly end: number
  readonly job: Job
}

export interface ScheduleOptions {
  /** `performance.now()` after which a bounded contender stops. */
  readonly deadline: number
  /** Keep whatever `cancel` needs (ids), as a caller that wants to cancel would. */
  readonly keepHandles: boolean
}

/** How far a phase got: tasks scheduled or run, and why it stopped early, if it did. */
export interface Progress {
  readonly done: number
  readonly cutOff?: string | undefined
}

export interface VirtualInstance {
  /** Schedules the workload's tasks in order (task k has delay `delays[k]`). */
  schedule(w: Workload, o: ScheduleOptions): Progress | Promise<Progress>
  /** Runs everything scheduled, advancing its virtual clock to `w.end`. */
  run(w: Workload, deadline: number): Progress | Promise<Progress>
  /** Cancels the tasks scheduled at these positions; returns how many it cancelled (part 4). */
  cancel?(positions: Uint32Array): number
  /** Drops the handles kept for `cancel`, so memory readings show the scheduler alone. */
  dropHandles?(): void
  /** Structure figures such as heap entries, read after the phases. */
  figures?(): Record<string, number>
  close?(): void | Promise<void>
}

export interface VirtualContender {
  /** Short name for --contenders and the JSON file. */
  readonly key: string
  /** Row label. */
  readonly name: string
  /** May stop early (time budget, heap guard); such rows are not repeated once cut off. */
  readonly bounded?: boolean
  /** The reference row that ratios are taken against. */
  readonly ceiling?: boolean
  readonly create: () => VirtualInstance | Promise<VirtualInstance>
}

/** Checks a bounded loop's budget every `mask + 1` iterations. */
export const CHECK_MASK = 1023
