/**
 * @internal
 * Completion: a finished run's row is settled by the core's rules (`Rules.settle`: the next
 * state, slot or retry, the failure policy) and written back with its ledger row and events in
 * one transaction under the claim's fence. A late completion from a lost lease is refused and
 * recorded (`fenced-out`); a run cut off by closing is handed back (`released`).
 */
import { Errors, type Random, Rules, Schedule, type Task } from "@tickwork/core"
import { Ledger, Metrics } from "@tickwork/runtime"
import { Cause, Effect, Exit, Queue, Result } from "effect"
import type { Change, Decided, EventEntry, RunEntry, TaskRow } from "../TaskStore.ts"
import type { Env, Finished } from "./env.ts"
import * as Events from "./events.ts"
import type { Held } from "./held.ts"
import * as Rows from "./rows.ts"

/** A failure, rendered for the ledger. */
export const renderOutcome = (outcome: Task.Outcome): string | null => {
  switch (outcome.kind) {
    case "succeeded":
      return null
    case "failed":
      return render(outcome.error)
    case "defect":
      return `defect: ${render(outcome.defect)}`
    case "interrupted":
      return "interrupted"
    case "timed-out":
      return `timed out after ${outcome.afterMs} ms`
  }
}

const render = (u: unknown): string => {
  if (typeof u === "object" && u !== null) {
    const tag = (u as { _tag?: unknown })._tag
    const message = (u as { message?: unknown }).message
    if (typeof message === "string" && message !== "") {
      return typeof tag === "string" ? `${tag}: ${message}` : message
    }
    if (typeof tag === "string") return tag
  }
  return Errors.show(u)
}

/** The subject of events about a held run: its row under its claim's fence. */
const subject = (h: Held): Events.Subject => h.row

/** The fenced-out event recorded instead of a change whose claim was lost. */
const fencedOut = (env: Env, h: Held, at: number, detail: string): EventEntry =>
  Events.make("fenced-out", subject(h), at, env.owner, { detail })

/** Hands a held run back unfinished: due again at its `run_at`. */
export const release = (env: Env, h: Held, at: number): Change => ({
  id: h.row.id,
  fence: h.row.fence,
  update: Rows.release(h.row, at, h.started),
  events: [
    Events.make("released", subject(h), at, env.owner, {
      cause: h.started ? "interrupted" : "not started",
      detail: `attempt ${h.row.attempt}, delivery ${h.row.deliveries}`,
    }),
  ],
  fencedOut: fencedOut(env, h, at, "release after the lease was lost"),
})

/** A draw-recording random source: a second decision replays the first one's draws. */
const recording = (random: Random.Random) => {
  const draws: Array<number> = []
  return {
    first: {
      next: () => {
        const v = random.next()
        draws.push(v)
        return v
      },
    },
    again: (): Random.Random => {
      let k = 0
      return { next: () => (k < draws.length ? (draws[k++] as number) : random.next()) }
    },
  }
}

/** A finished run's change: load row → `Rules.settle` → store row (with its ledger row). */
export const toChange = (
  env: Env,
  f: Finished,
): {
  change: Change
  ran: (RunEntry & { readonly kind: "ran" }) | undefined
  continuation?: Task.Continuation | undefined
} => {
  const h = f.held
  const outcome = f.outcome
  if (outcome === undefined) return { change: release(env, h, env.now()), ran: undefined }
  if (h.releasing && outcome.kind === "interrupted") {
    return { change: release(env, h, f.finishedAt), ran: undefined }
  }
  const { finishedAt, startedAt } = f
  const error = renderOutcome(outcome)
  const seq = env.nextSeq()
  const random = recording(env.random)
  /**
   * The decision for the run on `row` (as claimed, or as it is when the commit re-reads it: a
   * pause asked for, an update, a breaker): load row → `Rules.settle` → row update.
   */
  const decide = (
    row: TaskRow,
    draws: Random.Random,
    breakerOpens: (() => boolean) | undefined,
  ): Decided & { readonly run: RunEntry } => {
    const view = Rows.view(row, env.options.windowMs, h.runNumber)
    const settled = Rules.settle(view, outcome, finishedAt, { random: draws, breakerOpens })
    const record = Rules.record(
      {
        id: row.id as Task.TaskId,
        generation: row.generation,
        slot: row.slot,
        scheduledFor: row.runAt,
        startedAt,
        attempt: row.attempt,
        runNumber: h.runNumber,
        tags: row.tags,
      },
      outcome,
      finishedAt,
      settled,
    )
    const events: Array<EventEntry> = []
    if (settled.dropped !== undefined) {
      events.push(Events.missed(Ledger.missed(record, settled.dropped), row, env.owner))
    }
    const update = Rows.settled(row, settled, h.runNumber, finishedAt, error, seq)
    // A schedule change that waited for this slot took effect: the new schedule is stored.
    const restart = row.restart
    const schedule =
      settled.consumed && restart !== undefined && settled.scheduleError === undefined
        ? Schedule.encode(restart, { first: settled.nextSlot ?? settled.slot, plan: settled.plan })
        : undefined
    return {
      update:
        schedule !== undefined && Result.isSuccess(schedule)
          ? { ...update, schedule: schedule.success }
          : update,
      continuation: settled.continuation,
      run: {
        taskId: row.id,
        generation: row.generation,
        slot: row.slot,
        attempt: row.attempt,
        runAt: row.runAt,
        startedAt,
        finishedAt,
        outcome: outcome.kind,
        error,
        fence: row.fence,
        owner: env.owner,
        delivery: row.deliveries,
        state: settled.state,
        nextRunAt: settled.nextSlot ?? null,
      },
      events,
      slot: { ended: settled.slotEnded, failed: outcome.kind !== "succeeded" },
    }
  }
  const row = h.row
  const decided = decide(row, random.first, undefined)
  return {
    change: {
      id: row.id,
      fence: row.fence,
      revision: row.revision,
      update: decided.update,
      run: decided.run,
      events: decided.events,
      // Decided again in the commit when the row changed while it ran (by this or another
      // process: a pause, an update) or has a breaker, with the same jitter draws.
      redecide: (fresh, breakerOpens) => decide(fresh, random.again(), breakerOpens),
      fencedOut: fencedOut(
        env,
        h,
        finishedAt,
        `attempt ${row.attempt}, delivery ${row.deliveries}, outcome ${outcome.kind}${h.lost ? " (lease lost)" : ""}`,
      ),
    },
    ran: { kind: "ran", ...decided.run },
    continuation: decided.continuation,
  }
}

/** A held row that cannot be read back into the rules' terms: it ends failed, saying why. */
const unreadable = (env: Env, h: Held, at: number, error: unknown): Change => ({
  id: h.row.id,
  fence: h.row.fence,
  update: Rows.unreadable(h.row, at, error),
  events: [],
  fencedOut: fencedOut(env, h, at, "failed unreadable task"),
})

/** Completes the finished runs queued so far, in one commit. */
const completeBatch = (env: Env): Effect.Effect<void> =>
  Effect.gen(function* () {
    const batch = yield* Queue.takeAll(env.finished)
    const prepared = batch.map((f) => {
      try {
        return toChange(env, f)
      } catch (error) {
        return { change: unreadable(env, f.held, f.finishedAt, error), ran: undefined }
      }
    })
    const committed = yield* env.outage.commit(
      prepared.map((p) => p.change),
      { seq: env.nextSeq, owner: env.owner },
    )
    for (let k = 0; k < batch.length; k++) {
      const { change, ran, continuation } = prepared[k] as (typeof prepared)[number]
      const h = (batch[k] as Finished).held
      const handler = h.row.handler
      const result = committed.results[k]
      const decided = committed.decided[k]
      if (result === "fenced-out") {
        env.counters.fencedOut++
        env.publish(change.fencedOut, handler)
      } else if (ran === undefined) {
        if (change.update.state !== "failed") env.counters.released++
        for (const e of change.events) env.publish(e, handler)
      } else {
        env.counters.completed++
        // The record says what its row became: as decided again in the commit, if it was.
        const run = decided?.run === undefined ? ran : { kind: "ran" as const, ...decided.run }
        env.publish(
          result === "cancelled" ? { ...run, state: "cancelled", nextRunAt: null } : run,
          handler,
        )
        if (result === "applied" || result === "held") {
          // As the runtime's recorder counts a retry (one rule, in Metrics).
          Metrics.countRetry(
            env.runSeries(handler),
            decided?.continuation ?? continuation ?? "final",
          )
          for (const e of decided?.events ?? change.events) env.publish(e, handler)
        }
      }
      env.held.forget(h)
    }
    // Breakers this batch moved: their transitions and the tasks they held or released.
    for (const e of committed.events) env.publish(e)
    env.wakeup.wake()
    // Work this batch made due soon (a next slot, a retry, a run handed back): other processes
    // with free workers hear of it now rather than at their next poll.
    const signal = env.store.signal
    if (signal !== undefined && Number.isFinite(env.options.pollMs)) {
      const soon = env.now() + env.options.pollMs
      const due = prepared.some(
        (p, k) =>
          committed.results[k] !== "fenced-out" &&
          committed.results[k] !== "cancelled" &&
          p.change.update.state === "scheduled" &&
          p.change.update.dueAt <= soon,
      )
      if (due) yield* Effect.ignore(signal.notify)
    }
  })

/** Completes finished runs, batch by batch, for as long as it lives; a bug is logged, not fatal. */
export const completer = (env: Env): Effect.Effect<never> =>
  Effect.forever(
    Effect.gen(function* () {
      const exit = yield* Effect.exit(completeBatch(env))
      if (Exit.isFailure(exit) && !Cause.hasInterruptsOnly(exit.cause)) {
        yield* Effect.logWarning("tickwork durable: completing runs failed", exit.cause)
      }
    }),
  )
