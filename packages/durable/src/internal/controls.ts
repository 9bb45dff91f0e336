/**
 * @internal
 * The controls (SPEC §5, §15) on stored rows: pause, resume and update, one task each, and the
 * same over every task a filter matches. The store reads the row and writes what the core's rules
 * (`Rules.pauseStep`, `Rules.resume`, `Rules.validateChanges`) decide, in one transaction.
 */
import {
  type Breaker,
  Declared,
  Errors,
  type MissedRun,
  type Retry,
  Rules,
  Schedule,
  type Task,
  Time,
} from "@tickwork/core"
import { Effect, Result } from "effect"
import { type InvalidPayload, type NotDurable, type StoreError, UnknownHandler } from "../Errors.ts"
import { breakerOf, notDurable } from "./accept.ts"
import { storable } from "./codec.ts"
import type { ControlEnv as Env } from "./env.ts"
import * as Events from "./events.ts"
import type { Definition, EventEntry, Modification, Query, Rejected, TaskRow } from "./model.ts"
import { optionError, unknownKey } from "./options.ts"
import * as Payload from "./payload.ts"
import * as Rows from "./rows.ts"
import { withoutManual } from "./trigger.ts"

/**
 * Pauses a task by hand: a scheduled one at once (it keeps its slot), a running one when its run
 * ends. False for a task already paused (or going to be), final or unknown. A task its breaker
 * or failure policy holds (or will hold when its run ends) that is paused by hand becomes paused
 * by hand (`Rules.pauseStep`) and stays paused until resumed: the
 * breaker's closing no longer unholds it. A half-open breaker whose probe is paused by hand
 * lets another held task through.
 */
export const pause = (
  env: Env,
  id: string,
  origin?: string | undefined,
): Effect.Effect<boolean, StoreError> => {
  const now = env.now()
  let outranked = false
  return Effect.map(
    env.store.modify(
      id,
      (stored) => {
        // A manual run that has not started, or waits with a task its breaker holds, is
        // dropped by a pause by hand (SPEC §19.1, Rules.pauseDropsManual).
        const row = Rules.pauseDropsManual("manual") ? withoutManual(stored) : stored
        const dropped = row === stored ? {} : { kept: null }
        // A running row's `pausedReason` is its pause request.
        const step = Rules.pauseStep(
          { state: row.state, pausedReason: row.pausedReason, pauseRequest: row.pausedReason },
          "manual",
        )
        if (step === "Ignored") return undefined
        if (step === "Outranked") {
          outranked = true
          return row.state === "running"
            ? { update: Rows.requested(row, "manual", now), events: [] }
            : { update: { ...Rows.paused(row, "manual", now), ...dropped }, events: [] }
        }
        const event = Events.make("paused", row, now, null, { cause: "manual", origin })
        return step === "Paused"
          ? {
              update: { ...Rows.paused(row, "manual", now), ...dropped },
              events: [event],
              // A probe paused by hand: the breaker's step picks another held task.
              breaker:
                row.breaker === null
                  ? undefined
                  : { leave: null, join: null, unprobe: row.breaker },
            }
          : { update: Rows.requested(row, "manual", now), events: [] }
      },
      env.publish,
    ),
    (wrote) => wrote && !outranked,
  )
}

/**
 * Resumes a paused task (whatever paused it) at the slot the rules give, recording the slots
 * that passed as skipped; or withdraws a pause requested while it runs. False for any other task.
 */
export const resume = (
  env: Env,
  id: string,
  origin?: string | undefined,
): Effect.Effect<boolean, StoreError> => {
  const now = env.now()
  // The task's handler, for the label of the slots its resume skips.
  let handler: string | undefined
  return env.store.modify(
    id,
    (row) => {
      handler = row.handler
      if (row.state === "running") {
        return row.pausedReason === null
          ? undefined
          : { update: Rows.requested(row, null, now), events: [] }
      }
      if (row.state !== "paused") return undefined
      const r = Rows.resume(row, env.options.windowMs, now, env.nextSeq())
      const events: Array<EventEntry> = []
      if (r.skipped !== undefined)
        events.push(Events.paused(r.skipped, row, now, r.nextSlot, "paused", origin))
      events.push(
        Events.make("resumed", { ...row, slot: r.slot }, now, null, {
          cause: row.pausedReason,
          detail: `due at ${r.update.runAt}`,
          origin,
        }),
      )
      return { update: r.update, events }
    },
    (e) => env.publish(e, e.taskId === id ? handler : undefined),
  )
}

/** What `update` may change: every task option but the id and the handler. */
export interface Changes {
  readonly schedule?: Schedule.Schedule | undefined
  readonly priority?: Task.Priority | undefined
  readonly retry?: Retry.RetryPolicy | undefined
  readonly missedRuns?: MissedRun.MissedRunPolicy | undefined
  readonly pauseAfterConsecutiveFailures?: number | undefined
  readonly window?: Time.DurationInput | null | undefined
  readonly timeout?: Time.DurationInput | undefined
  readonly tags?: ReadonlyArray<string> | undefined
  readonly breaker?: Breaker.BreakerPolicy | string | null | undefined
  readonly payload?: unknown
}

/** The keys of {@link Changes}. */
export const updateKeys: ReadonlySet<string> = Rules.keysWith(Rules.updateKeys, {
  without: ["job"],
  with: ["timeout", "payload"],
})

/** An update's typed errors: the core's, and the durable ones a payload or schedule can cause. */
export type UpdateError = Errors.ScheduleError | InvalidPayload | NotDurable | UnknownHandler

/**
 * The update of `row` at `now` (SPEC §15), or the typed error of the first bad change. Nothing
 * here decides a rule: `Rules.validateChanges` checks the changes and `Rules.updateStep` plans
 * the step (a new schedule now or waiting as the row's `restart`, a re-queue, a breaker move),
 * as in the kernel.
 */
export const decideUpdate = (
  env: Env,
  stored: TaskRow,
  changes: Changes,
  now: number,
): Modification | Rejected<UpdateError> => {
  const reject = (e: UpdateError) => ({ rejected: e })
  // A custom schedule's next() cannot be stored: said before the rules call it.
  if (changes.schedule?._tag === "Custom") return reject(notDurable(changes.schedule))
  const valid = Rules.validateChanges(changes, now, {
    plan: stored.plan,
    windowMs: stored.windowMs ?? Rules.NO_WINDOW,
  })
  if (!("resolved" in valid)) return reject(valid)
  // SPEC §19.1: a new schedule drops a manual run that has not started, held by a breaker or
  // not; the step is then decided on the run it had set aside, as in the kernel.
  const row =
    valid.resolved !== undefined && changes.schedule !== undefined ? withoutManual(stored) : stored
  let schedule = row.schedule
  let restart = row.restart
  let slot: number | undefined
  const breakerChange =
    changes.breaker === undefined
      ? undefined
      : changes.breaker === null
        ? null
        : breakerOf(changes.breaker, row.id, env.options.breakers)
  if (breakerChange instanceof Errors.InvalidOption) return reject(breakerChange)
  const own = typeof changes.breaker === "object" && changes.breaker !== null
  const step = Rules.updateStep(
    { state: row.state, attempt: row.attempt, rank: row.priority, breaker: row.breaker !== null },
    {
      schedule: valid.resolved !== undefined && changes.schedule !== undefined,
      rank: valid.rank,
      breaker:
        breakerChange === undefined || (breakerChange?.key === row.breaker && !own)
          ? "keep"
          : breakerChange === null
            ? // Stryker disable next-line StringLiteral: equivalent, Rules.updateStep reads only "keep" and "change": any other word leaves and joins nothing, as "remove"
              "remove"
            : "change",
    },
  )
  if (valid.resolved !== undefined && changes.schedule !== undefined) {
    const encoded = Schedule.encode(changes.schedule, valid.resolved)
    if (Result.isFailure(encoded))
      return reject(notDurable(changes.schedule, encoded.failure.message))
    if (step.schedule === "waits") {
      const kept = storable(changes.schedule)
      if (kept === undefined) return reject(notDurable(changes.schedule))
      restart = kept
    } else {
      schedule = encoded.success
      restart = undefined
      slot = valid.resolved.first
    }
  }
  let timeoutMs = row.timeoutMs
  if (changes.timeout !== undefined) {
    const ms = Time.toMillisWith(changes.timeout, (reason) =>
      optionError("timeout", changes.timeout, reason),
    )
    if (typeof ms !== "number") return reject(ms)
    timeoutMs = ms
  }
  let payload = row.payload
  if ("payload" in changes && changes.payload !== undefined) {
    const handler = env.options.handlers.get(row.handler)
    if (handler === undefined) {
      return reject(
        new UnknownHandler({
          field: "handler",
          value: row.handler,
          message: `handler ${Errors.show(row.handler)} is not registered with this scheduler, so its payload cannot be checked`,
        }),
      )
    }
    const encoded = Payload.encode(handler, changes.payload)
    if (typeof encoded !== "string") return reject(encoded)
    payload = encoded
  }
  const breakerKey = breakerChange === undefined ? row.breaker : (breakerChange?.key ?? null)
  const moves: Modification["breaker"] =
    step.leave || step.join
      ? {
          leave: step.leave ? row.breaker : null,
          join: step.join ? breakerKey : null,
          own: own && breakerChange !== null ? breakerChange : undefined,
        }
      : undefined
  const priority = valid.rank ?? row.priority
  const define: Definition = {
    payload,
    schedule,
    restart,
    priority,
    retry: valid.retry ?? row.retry,
    missedRuns: valid.missedRuns ?? row.missedRuns,
    pauseAfter: valid.pauseAfter ?? row.pauseAfter,
    timeoutMs,
    tags: valid.tags ?? row.tags,
    windowMs:
      valid.windowMs === undefined
        ? row.windowMs
        : valid.windowMs === Rules.NO_WINDOW
          ? null
          : valid.windowMs,
    breaker: breakerKey,
  }
  return {
    update: {
      ...Rows.updated(row, now, { slot, seq: step.requeue ? env.nextSeq() : undefined }, define),
      ...(row === stored ? {} : { kept: null }),
    },
    events: [],
    breaker: moves,
  }
}

/**
 * Updates a live task in place (SPEC §15); false for an unknown or final one, the typed error of
 * the first bad change otherwise (then nothing changed).
 */
export const update = (
  env: Env,
  id: string,
  changes: Changes,
): Effect.Effect<boolean, UpdateError | StoreError> =>
  Effect.suspend(() => {
    if (typeof changes !== "object" || changes === null) {
      return Effect.fail(optionError("changes", changes, "must be an object"))
    }
    const unknown = unknownKey(changes, updateKeys)
    if (unknown !== undefined) return Effect.fail(unknown)
    const now = env.now()
    // Recorded as the in-memory ledger records it (SPEC §18.1): the fields it was given.
    const change = Declared.changeOf({ update: changes })
    return env.store.modify<UpdateError>(
      id,
      (row) => {
        const m = decideUpdate(env, row, changes, now)
        if ("rejected" in m) return m
        // Stryker disable next-line LogicalOperator: equivalent, an update's row update always has its slot
        const event = Events.updated(row, now, env.owner, change, m.update.slot ?? row.slot)
        return { ...m, events: [...m.events, event] }
      },
      env.publish,
    )
  })

/** Rows read per page when a bulk control walks a filter's matches. */
const PAGE = 500

/**
 * Applies `change` to every task `query` matches, page by page (by id), returning the ids it
 * changed: one transaction per task, O(matches).
 */
export const changeAll = (
  env: Env,
  query: Omit<Query, "limit" | "after">,
  change: (id: string) => Effect.Effect<boolean, StoreError>,
): Effect.Effect<ReadonlyArray<Task.TaskId>, StoreError> =>
  Effect.gen(function* () {
    const out: Array<Task.TaskId> = []
    let after: string | undefined
    for (;;) {
      const rows = yield* env.store.list({ ...query, after, limit: PAGE })
      for (const row of rows) if (yield* change(row.id)) out.push(row.id as Task.TaskId)
      if (rows.length < PAGE) return out
      after = (rows[rows.length - 1] as TaskRow).id
    }
  })
