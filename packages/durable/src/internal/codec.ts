/**
 * @internal
 * Row codecs: the columns of `tickwork_tasks`, `tickwork_runs` and `tickwork_events` to and
 * from the store's types. The schedule column is the core's `Schedule.Encoded`, read back with
 * `Schedule.decode`.
 */
import type { Breaker } from "@tickwork/core"
import { type MissedRun, type Retry, type Rules, Schedule, type Task } from "@tickwork/core"
import { Array as Arr, Result } from "effect"
import type {
  BreakerRow,
  EventEntry,
  EventKind,
  KeptRun,
  NewTask,
  RunEntry,
  TaskRow,
} from "./model.ts"

/** A row as the driver returns it. */
export type Raw = Record<string, unknown>

/** A number column (PostgreSQL returns `bigint` as `BigInt`). */
export const num = (u: unknown): number => (typeof u === "number" ? u : Number(u))
/** A nullable number column. */
export const numOrNull = (u: unknown): number | null =>
  u === null || u === undefined ? null : num(u)
/** A nullable text column. */
export const strOrNull = (u: unknown): string | null =>
  u === null || u === undefined ? null : String(u)

/**
 * Reads a row of `tickwork_tasks` (PostgreSQL returns `bigint` columns as `BigInt`); throws for
 * a row that cannot be read (edited by hand).
 */
export const decodeRow = (r: Raw): TaskRow => {
  const text = String(r.schedule)
  const decoded = Schedule.decode(JSON.parse(text))
  if (Result.isFailure(decoded)) throw new Error(decoded.failure.message)
  return {
    id: String(r.id),
    generation: num(r.generation),
    handler: String(r.handler),
    payload: String(r.payload),
    schedule: decoded.success.encoded,
    plan: decoded.success.plan,
    priority: num(r.priority),
    retry: JSON.parse(String(r.retry)) as Retry.Resolved,
    missedRuns: String(r.missed_runs) as MissedRun.MissedRunPolicy,
    pauseAfter: num(r.pause_after),
    timeoutMs: num(r.timeout_ms),
    state: String(r.state) as Task.TaskState,
    slot: num(r.slot),
    runAt: num(r.run_at),
    claimableAt: num(r.due_at),
    attempt: num(r.attempt),
    runNumber: num(r.run_number),
    consecutiveFailures: num(r.consecutive_failures),
    deliveries: num(r.deliveries),
    fence: num(r.fence),
    leaseOwner: strOrNull(r.lease_owner),
    seq: num(r.seq),
    createdAt: num(r.created_at),
    updatedAt: num(r.updated_at),
    finishedAt: numOrNull(r.finished_at),
    lastError: strOrNull(r.last_error),
    pausedReason: strOrNull(r.paused_reason) as Task.PauseReason | null,
    resumeFrom: r.resume_from === null || r.resume_from === undefined ? -1 : num(r.resume_from),
    tags:
      r.tags === null || r.tags === undefined ? [] : (JSON.parse(String(r.tags)) as Array<string>),
    windowMs: numOrNull(r.window_ms),
    breaker: strOrNull(r.breaker),
    restart:
      r.restart === null || r.restart === undefined
        ? undefined
        : (JSON.parse(String(r.restart)) as Schedule.Schedule),
    revision: r.revision === null || r.revision === undefined ? 0 : num(r.revision),
    kept:
      r.kept === null || r.kept === undefined ? undefined : (JSON.parse(String(r.kept)) as KeptRun),
    ...limitColumns(r),
    ...(r.dedup_key === null || r.dedup_key === undefined
      ? {}
      : {
          dedup: {
            key: String(r.dedup_key),
            mode: String(r.dedup_mode) as Rules.DedupMode,
            windowMs: numOrNull(r.dedup_window_ms) ?? 0,
          },
        }),
  }
}

/**
 * A row's flow-control columns (SPEC §20; NULL, or absent before migration 0009, reads as none).
 * A wait is shown only while the row is `scheduled`: the claim that starts it clears it, and a
 * row paused or ended since keeps nothing to wait for.
 */
const limitColumns = (r: Raw): Pick<TaskRow, "group" | "key" | "waiting"> => {
  const out: { group?: string; key?: string; waiting?: Task.WaitInfo } = {}
  if (r.task_group !== null && r.task_group !== undefined) out.group = String(r.task_group)
  if (r.task_key !== null && r.task_key !== undefined) out.key = String(r.task_key)
  if (
    String(r.state) === "scheduled" &&
    (r.wait_cause === "concurrency" || r.wait_cause === "rate-limited")
  ) {
    const until = numOrNull(r.wait_until)
    out.waiting = {
      cause: r.wait_cause,
      scope: String(r.wait_scope),
      since: num(r.wait_since),
      ...(r.wait_cause === "rate-limited" && until !== null ? { until } : {}),
    }
  }
  return out
}

/**
 * A schedule in a form that survives JSON: whole ms, a cron expression as text. Read back, it
 * resolves as the schedule given would at any `now` (a delay stays a delay, an instant an
 * instant). `undefined` for a schedule with no stored form (custom, a parsed `Cron`).
 */
export const storable = (schedule: Schedule.Schedule): Schedule.Schedule | undefined => {
  // Resolved at 0, a delay's first slot is the delay itself.
  const at0 = Schedule.resolve(schedule, 0)
  if (!("first" in at0)) return undefined
  switch (schedule._tag) {
    case "Once":
      return Schedule.once(at0.first)
    case "At":
      return Schedule.at(at0.first)
    case "FixedRate":
    case "FixedDelay": {
      const plan = at0.plan as { readonly period: number }
      return schedule._tag === "FixedRate"
        ? Schedule.fixedRate(plan.period, { delay: at0.first })
        : Schedule.fixedDelay(plan.period, { delay: at0.first })
    }
    case "Cron":
      return typeof schedule.expression === "string"
        ? Schedule.cron(schedule.expression, {
            timeZone: schedule.timeZone,
            ...(schedule.dayMatch === undefined ? {} : { dayMatch: schedule.dayMatch }),
          })
        : undefined
    default:
      return undefined
  }
}

/** Reads a row of `tickwork_breakers`. */
export const decodeBreaker = (r: Raw): BreakerRow => ({
  key: String(r.key),
  name: String(r.name),
  shared: num(r.shared) === 1,
  policy: JSON.parse(String(r.policy)) as Breaker.Resolved,
  state: String(r.state) as Breaker.BreakerState,
  failures: num(r.failures),
  opens: num(r.opens),
  openedAt: numOrNull(r.opened_at),
  halfOpenAt: numOrNull(r.half_open_at),
  probe: strOrNull(r.probe),
  probeGeneration: numOrNull(r.probe_generation),
})

/** Reads a row of `tickwork_runs`. */
export const decodeRun = (r: Raw): RunEntry => ({
  taskId: String(r.task_id),
  generation: num(r.generation),
  slot: num(r.slot),
  attempt: num(r.attempt),
  runAt: num(r.run_at),
  startedAt: num(r.started_at),
  finishedAt: num(r.finished_at),
  outcome: String(r.outcome) as Task.Outcome["kind"],
  error: strOrNull(r.error),
  fence: num(r.fence),
  owner: String(r.owner),
  delivery: num(r.delivery),
  state: String(r.state) as Task.TaskState,
  nextRunAt: numOrNull(r.next_run_at),
  result: strOrNull(r.result),
  resultError: strOrNull(r.result_error),
  // A store not yet at migration 0008 has no `manual` column: its runs read as not manual.
  manual: r.manual !== null && r.manual !== undefined && num(r.manual) === 1,
})

/** Reads a row of `tickwork_events`. */
export const decodeEvent = (r: Raw): EventEntry => ({
  taskId: String(r.task_id),
  generation: num(r.generation),
  kind: String(r.kind) as EventKind,
  firstSlot: num(r.first_slot),
  lastSlot: num(r.last_slot),
  count: num(r.count),
  cause: strOrNull(r.cause),
  at: num(r.at),
  fence: numOrNull(r.fence),
  owner: strOrNull(r.owner),
  detail: strOrNull(r.detail),
  breaker: strOrNull(r.breaker),
  ...(r.origin === null || r.origin === undefined ? {} : { origin: String(r.origin) }),
})

/** The columns of a new task. */
export const taskRecord = (t: NewTask) => ({
  id: t.id,
  generation: 1,
  handler: t.handler,
  payload: t.payload,
  schedule: JSON.stringify(t.schedule),
  priority: t.priority,
  retry: JSON.stringify(t.retry),
  missed_runs: t.missedRuns,
  pause_after: t.pauseAfter,
  timeout_ms: t.timeoutMs,
  state: "scheduled",
  slot: t.slot,
  run_at: t.slot,
  due_at: t.slot,
  attempt: 1,
  run_number: 0,
  consecutive_failures: 0,
  deliveries: 0,
  fence: 0,
  lease_owner: null,
  seq: t.seq,
  created_at: t.now,
  updated_at: t.now,
  finished_at: null,
  last_error: null,
  paused_reason: null,
  resume_from: -1,
  tags: JSON.stringify(t.tags ?? []),
  window_ms: t.windowMs ?? null,
  breaker: t.breaker?.key ?? null,
  restart: null,
  revision: 0,
  kept: null,
  task_group: t.group ?? null,
  task_key: t.key ?? null,
  wait_cause: null,
  wait_scope: null,
  wait_since: null,
  wait_until: null,
  dedup_key: t.dedup?.key ?? null,
  dedup_mode: t.dedup?.mode ?? null,
  dedup_window_ms: t.dedup?.windowMs ?? null,
})

/** The columns of a new task, in {@link taskRecord}'s order (its keys). */
export const TASK_COLUMNS: ReadonlyArray<string> = [
  "id",
  "generation",
  "handler",
  "payload",
  "schedule",
  "priority",
  "retry",
  "missed_runs",
  "pause_after",
  "timeout_ms",
  "state",
  "slot",
  "run_at",
  "due_at",
  "attempt",
  "run_number",
  "consecutive_failures",
  "deliveries",
  "fence",
  "lease_owner",
  "seq",
  "created_at",
  "updated_at",
  "finished_at",
  "last_error",
  "paused_reason",
  "resume_from",
  "tags",
  "window_ms",
  "breaker",
  "restart",
  "revision",
  "kept",
  "task_group",
  "task_key",
  "wait_cause",
  "wait_scope",
  "wait_since",
  "wait_until",
  "dedup_key",
  "dedup_mode",
  "dedup_window_ms",
]

/**
 * The columns every new task starts with the same value in, as SQL literals (each equal to
 * {@link taskRecord}'s value): the SQLite insert writes them into its statement text instead of
 * binding them per row. Binding fewer values is most of what a multi-row insert costs in the
 * driver: 400-row upserts of 100k tasks took a third less CPU time with these 19 of the 42
 * columns as literals (better-sqlite3 13, 2026-12-02).
 */
export const NEW_TASK_LITERALS: Readonly<Record<string, string>> = {
  generation: "1",
  state: "'scheduled'",
  attempt: "1",
  run_number: "0",
  consecutive_failures: "0",
  deliveries: "0",
  fence: "0",
  lease_owner: "NULL",
  finished_at: "NULL",
  last_error: "NULL",
  paused_reason: "NULL",
  resume_from: "-1",
  restart: "NULL",
  revision: "0",
  kept: "NULL",
  wait_cause: "NULL",
  wait_scope: "NULL",
  wait_since: "NULL",
  wait_until: "NULL",
}

/** The columns a new task binds a value to: {@link TASK_COLUMNS} but the literals. */
export const BOUND_TASK_COLUMNS: ReadonlyArray<string> = TASK_COLUMNS.filter(
  (c) => !(c in NEW_TASK_LITERALS),
)

/** The retry policy `pushTaskValues` wrote last, and its text. */
let lastRetry: { readonly policy: unknown; readonly text: string } = { policy: null, text: "null" }

/**
 * Appends `t`'s values of {@link BOUND_TASK_COLUMNS} to `out`, in that order: the values of
 * {@link taskRecord}, laid out for a positional multi-row statement without building the record
 * (in a profile of `scheduleAll` of 100k on SQLite, the records and their `Object.values` were
 * a tenth of the JavaScript time). A test holds the two to the same columns and values.
 */
export const pushTaskValues = (t: NewTask, out: Array<unknown>): void => {
  // Tasks without a retry option share one resolved policy object (never changed once
  // resolved): its text is kept for the next task that has the same object.
  if (t.retry !== lastRetry.policy) lastRetry = { policy: t.retry, text: JSON.stringify(t.retry) }
  out.push(
    t.id,
    t.handler,
    t.payload,
    JSON.stringify(t.schedule),
    t.priority,
    lastRetry.text,
    t.missedRuns,
    t.pauseAfter,
    t.timeoutMs,
    t.slot,
    t.slot,
    t.slot,
    t.seq,
    t.now,
    t.now,
    JSON.stringify(t.tags ?? []),
    t.windowMs ?? null,
    t.breaker?.key ?? null,
    t.group ?? null,
    t.key ?? null,
    t.dedup?.key ?? null,
    t.dedup?.mode ?? null,
    t.dedup?.windowMs ?? null,
  )
}

/** The columns of a run. */
export const runRecord = (r: RunEntry) => ({
  task_id: r.taskId,
  generation: r.generation,
  slot: r.slot,
  attempt: r.attempt,
  run_at: r.runAt,
  started_at: r.startedAt,
  finished_at: r.finishedAt,
  outcome: r.outcome,
  error: r.error,
  fence: r.fence,
  owner: r.owner,
  delivery: r.delivery,
  state: r.state,
  next_run_at: r.nextRunAt,
  result: r.result ?? null,
  result_error: r.resultError ?? null,
  manual: r.manual === true ? 1 : 0,
})

/** The columns of an event. */
export const eventRecord = (e: EventEntry) => ({
  task_id: e.taskId,
  generation: e.generation,
  kind: e.kind,
  first_slot: e.firstSlot,
  last_slot: e.lastSlot,
  count: e.count,
  cause: e.cause,
  at: e.at,
  fence: e.fence,
  owner: e.owner,
  detail: e.detail,
  breaker: e.breaker ?? null,
  // Written only when set: a store not yet at migration 0005 has no such column, and every
  // event but a named tool's control leaves it NULL anyway.
  ...(e.origin === undefined ? {} : { origin: e.origin }),
})

/**
 * The columns of events inserted together: one multi-row INSERT takes its column list from the
 * first record, so when any of them carries an `origin`, all of them name the column.
 */
export const eventRecords = (
  list: Arr.NonEmptyReadonlyArray<EventEntry>,
): Arr.NonEmptyReadonlyArray<Record<string, unknown>> => {
  const named = list.some((e) => e.origin !== undefined)
  return Arr.map(list, (e) =>
    named ? { ...eventRecord(e), origin: e.origin ?? null } : eventRecord(e),
  )
}
