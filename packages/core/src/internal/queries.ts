/**
 * @internal
 * The kernel's read-only queries over its rows: a task's info, its definition as `ensure`
 * compares it, the ids it knows and a breaker by name. None of them changes anything.
 */
import type * as Declared from "../Declared.ts"
import * as Lifecycle from "../Lifecycle.ts"
import * as Retry from "../Retry.ts"
import * as Rules from "../Rules.ts"
import * as Schedule from "../Schedule.ts"
import type { Priority, TaskId, TaskInfo, TaskState } from "../Task.ts"
import type { Breakers } from "./breakers.ts"
import type { DedupKeys } from "./dedup.ts"
import type { BreakerInfo, Stats } from "./kernelTypes.ts"
import { type Flow, waitingOf } from "./limits.ts"
import { NO_TAGS } from "./records.ts"
import type { Rows } from "./rows.ts"
import { formatId } from "./run.ts"

const { SCHEDULED, RUNNING, PAUSED, DONE, FAILED, CANCELLED } = Lifecycle
const NO_WINDOW = Rules.NO_WINDOW
const PRIORITIES = ["high", "normal", "low"] as const

/** @internal Everything known about row `i` (see `Kernel.info`). O(1). */
export const infoOf = <J>(rows: Rows<J>, i: number): TaskInfo => {
  const t = rows.t
  const extra = t.extra(i)
  const plan = extra?.plan
  return {
    id: (extra?.id ?? formatId(i, t.gen(i))) as TaskId,
    generation: t.gen(i),
    state: Lifecycle.states[t.state(i)] as TaskState,
    priority: PRIORITIES[t.rank(i)] as Priority,
    kind: plan === undefined ? "once" : plan.kind,
    scheduledFor: t.slot(i),
    attempt: t.attempt(i),
    runNumber: t.runs(i),
    consecutiveFailures: extra?.consecutiveFailures ?? 0,
    lastFailure: extra?.lastFailure,
    scheduleError: extra?.scheduleError,
    finishedAt: t.state(i) >= DONE ? rows.ring.finishedAt(t.ticket(i)) : undefined,
    runningSince: t.state(i) === RUNNING ? t.ticket(i) : undefined,
    pausedReason: extra?.pausedReason ?? extra?.pauseRequest,
    tags: extra?.tags ?? NO_TAGS,
    window: extra === undefined || extra.windowMs === NO_WINDOW ? undefined : extra.windowMs,
    breaker: extra?.breaker?.name,
    ...(extra?.scopes === undefined ? {} : scopeInfo(rows, i, extra.scopes)),
    ...(extra?.dedup === undefined ? {} : { dedup: dedupInfo(extra.dedup) }),
  }
}

/** @internal A task's deduplication key (SPEC §20.3) as its info shows it. */
const dedupInfo = (d: Rules.ResolvedDedup): NonNullable<TaskInfo["dedup"]> =>
  d.mode === "throttle"
    ? { key: d.key, mode: d.mode, window: d.windowMs }
    : { key: d.key, mode: d.mode }

/** @internal Row `i`'s group, key and current wait (SPEC §20) for its info. */
const scopeInfo = <J>(
  rows: Rows<J>,
  i: number,
  scopes: ReadonlyArray<string>,
): Pick<TaskInfo, "group" | "key" | "waiting"> => {
  const group = scopes.find((s) => s.startsWith("group:"))
  const key = scopes.find((s) => s.startsWith("key:"))
  const w = waitingOf(rows, i)
  return {
    group: group?.slice(6),
    key: key?.slice(4),
    waiting:
      w === undefined
        ? undefined
        : { cause: w.cause, scope: w.scope, since: w.since, until: w.until },
  }
}

/**
 * @internal Row `i`'s definition as `Declared.decide` compares it (see `Kernel.definition`): a
 * schedule change waiting for the slot in progress is its schedule, resolved at `now`.
 */
export const definitionOf = <J>(rows: Rows<J>, i: number, now: number): Declared.Current => {
  const t = rows.t
  const extra = t.extra(i)
  let plan = extra?.plan
  let at: number | undefined = plan === undefined ? t.slot(i) : undefined
  if (extra?.restart !== undefined) {
    const r = Schedule.resolve(extra.restart, now)
    if ("first" in r) {
      plan = r.plan
      at = r.plan === undefined ? r.first : undefined
    }
  }
  const cell = extra?.breaker
  return {
    state: Lifecycle.states[t.state(i)] as TaskState,
    definition: {
      plan,
      at,
      priority: PRIORITIES[t.rank(i)] as Priority,
      retry: extra?.retry ?? Retry.none,
      missedRuns: extra?.missedRuns ?? "catch-up",
      pauseAfter: extra?.pauseAfter ?? 0,
      tags: extra?.tags ?? NO_TAGS,
      windowMs: extra?.windowMs ?? NO_WINDOW,
      breaker: cell === undefined ? undefined : cell.shared ? cell.name : cell.policy,
      more: { job: t.job(i) },
    },
  }
}

/** @internal Ids of every row present (live and retained final ones), in table order. O(n). */
export const taskIdsOf = <J>(rows: Rows<J>): Array<TaskId> => {
  const out: Array<TaskId> = []
  for (let i = 0; i < rows.top; i++) {
    if (!rows.present(i)) continue
    out.push((rows.t.extra(i)?.id ?? formatId(i, rows.t.gen(i))) as TaskId)
  }
  return out
}

/** @internal A shared breaker by name, else a task's own breaker by the task's id (see `Kernel.breaker`). */
export const breakerOf = <J>(
  rows: Rows<J>,
  breakers: Breakers<J>,
  name: string,
): BreakerInfo | undefined => {
  const named = breakers.named.get(name)
  if (named !== undefined) return breakers.info(named)
  const i = rows.lookup(name)
  const cell = i < 0 ? undefined : rows.t.extra(i)?.breaker
  return cell === undefined || cell.shared ? undefined : breakers.info(cell)
}

const NO_WAITING = { concurrency: 0, "rate-limited": 0 } as const

/** @internal Counts by state and heap figures (see `Kernel.stats`). O(1) but for the waiters. */
export const statsOf = <J>(rows: Rows<J>, flow?: Flow<J>, keys?: DedupKeys<J>): Stats => {
  const c = rows.counts
  return {
    scheduled: c[SCHEDULED] as number,
    running: c[RUNNING] as number,
    paused: c[PAUSED] as number,
    done: c[DONE] as number,
    failed: c[FAILED] as number,
    cancelled: c[CANCELLED] as number,
    accepted: rows.accepted,
    removed: rows.removed,
    inFlight: rows.inFlight,
    heapEntries: rows.heap.size,
    deadEntries: rows.dead,
    waiting: flow === undefined ? NO_WAITING : flow.waitingCounts(),
    dedup: {
      keys: keys === undefined ? 0 : keys.held(),
      tracked: keys === undefined ? 0 : keys.tracked,
      deduplicated: keys?.deduplicated ?? 0,
      replaced: keys?.replaced ?? 0,
    },
    scopes: flow === undefined ? 0 : flow.cells.size,
  }
}
