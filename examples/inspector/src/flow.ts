// Flow control as the live view shows it (SPEC §20): what each task's `TaskInfo` says of its
// group, key, deduplication key and wait, and the scheduler's `stats` counts of waiting runs by
// cause and of deduplication keys. Neither the inspection stream nor the occurrence stream
// carries a wait (a waiting run has no event of its own: it is a due `scheduled` task the kernel
// passes over), so the view reads these from the scheduler's queries, in `watch`.
import type { Scheduler, Task } from "@tickwork/runtime"

/** A task's flow-control facts, as the page shows them under its name. */
export interface TaskFlow {
  /** Its flow-control group and key (SPEC §20.1), when it has them. */
  readonly group: string | undefined
  readonly key: string | undefined
  /** Its deduplication key and mode (SPEC §20.3); `window` in ms for `throttle`. */
  readonly dedup: Task.TaskInfo["dedup"]
  /** Why its due run has not started (SPEC §20.4): cause, scope, since, and until for a rate wait. */
  readonly waiting: Task.WaitInfo | undefined
}

/** No flow control: a task with no group, key, dedup key or wait. */
export const none: TaskFlow = {
  group: undefined,
  key: undefined,
  dedup: undefined,
  waiting: undefined,
}

/** The flow-control facts of one task's `TaskInfo`. */
export const of = (info: Task.TaskInfo): TaskFlow => ({
  group: info.group,
  key: info.key,
  dedup: info.dedup,
  waiting: info.waiting,
})

/** Whether two tasks' facts are the same, so a poll that finds nothing new sends nothing. */
export const same = (a: TaskFlow, b: TaskFlow): boolean => JSON.stringify(a) === JSON.stringify(b)

/** The scheduler-wide counts the page's summary shows (from `stats`). */
export interface FlowCounts {
  /** Due runs waiting on a limit now, by cause (SPEC §20.4). */
  readonly waiting: { readonly concurrency: number; readonly "rate-limited": number }
  /** Deduplication keys held by a live task, and the requests deduplicated and replaced (§20.3). */
  readonly dedup: {
    readonly keys: number
    readonly deduplicated: number
    readonly replaced: number
  }
}

/** Nothing waiting, no keys: before the first poll. */
export const noCounts: FlowCounts = {
  waiting: { concurrency: 0, "rate-limited": 0 },
  dedup: { keys: 0, deduplicated: 0, replaced: 0 },
}

/** The counts of a scheduler's `stats`. */
export const countsOf = (stats: Scheduler.SchedulerStats): FlowCounts => ({
  waiting: {
    concurrency: stats.waiting.concurrency,
    "rate-limited": stats.waiting["rate-limited"],
  },
  dedup: {
    keys: stats.dedup.keys,
    deduplicated: stats.dedup.deduplicated,
    replaced: stats.dedup.replaced,
  },
})
