/**
 * @internal
 * Completion: a finished run's row is settled by the core's rules (`Rules.settle`: the next
 * state, slot or retry, the failure policy) and written back with its ledger row and events in
 * one transaction under the claim's fence. A late completion from a lost lease is refused and
 * recorded (`fenced-out`); a run cut off by closing is handed back (recorded as a `released` event).
 */
import type { Task } from "@tickwork/core"
import { Metrics } from "@tickwork/runtime"
import { Cause, Effect, Exit, Queue } from "effect"
import type { Env, Finished } from "./env.ts"
import * as Events from "./events.ts"
import type { Held } from "./held.ts"
import * as Limited from "./limited.ts"
import type { Change, EventEntry, Redecision, RunEntry } from "./model.ts"
import * as Rows from "./rows.ts"
import * as Settle from "./settle.ts"

/** The subject of events about a held run: its row under its claim's fence. */
const subject = (h: Held): Events.Subject => h.row

/** The fenced-out event recorded instead of a change whose claim was lost. */
const fencedOut = (env: Env, h: Held, at: number, detail: string): EventEntry =>
  Events.make("fenced-out", subject(h), at, env.owner, { detail })

/**
 * Hands a held run back with no outcome (core's HAND_BACK): due again at its `run_at`, or held
 * when a pause was requested while it ran. Decided again on the row as the commit finds it, so a
 * pause requested after the claim (by any process) is not lost.
 */
export const handBack = (env: Env, h: Held, at: number): Change => {
  const events = [
    Events.make("released", subject(h), at, env.owner, {
      cause: h.started ? "interrupted" : "not started",
      detail: `attempt ${h.row.attempt}, delivery ${h.row.deliveries}`,
    }),
  ]
  return {
    id: h.row.id,
    fence: h.row.fence,
    update: Rows.handBack(h.row, at, h.started),
    redecide: (fresh) => ({ update: Rows.handBack(fresh, at, h.started), events }),
    events,
    fencedOut: fencedOut(env, h, at, "release after the lease was lost"),
  }
}

/**
 * A finished run's change: load row → `Rules.settle` → store row (with its ledger row), decided
 * by `settle.ts` from data the change carries (`again`), which the commit decides from again
 * when the row changed while it ran.
 */
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
  if (outcome === undefined) return { change: handBack(env, h, env.now()), ran: undefined }
  if (h.releasing && outcome.kind === "interrupted") {
    return { change: handBack(env, h, f.finishedAt), ran: undefined }
  }
  const row = h.row
  const draws: Array<number> = []
  const again: Redecision = {
    outcome,
    startedAt: f.startedAt,
    finishedAt: f.finishedAt,
    runNumber: h.runNumber,
    seq: env.nextSeq(),
    windowMs: env.options.windowMs,
    owner: env.owner,
    draws,
  }
  const decided = Settle.decide(row, again, Settle.recording(env.random, draws), undefined)
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
      again,
      fencedOut: fencedOut(
        env,
        h,
        f.finishedAt,
        `attempt ${row.attempt}, delivery ${row.deliveries}, outcome ${outcome.kind}${h.lost ? " (lease lost)" : ""}`,
      ),
    },
    ran: { kind: "ran", ...decided.run },
    // Stryker disable next-line StringLiteral: equivalent, a settled run always has a continuation (Rules.settle gives one)
    continuation: decided.continuation ?? "final",
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
      { seq: env.nextSeq, owner: env.owner, random: env.random },
    )
    for (let k = 0; k < batch.length; k++) {
      const p = prepared[k] as (typeof prepared)[number]
      const { change, ran } = p
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
            // Stryker disable next-line StringLiteral: equivalent, a settled run always has a continuation (Rules.settle gives one)
            decided?.continuation ?? p.continuation ?? "final",
          )
          for (const e of decided?.events ?? change.events) env.publish(e, handler)
        }
      }
      env.held.forget(h)
    }
    // Breakers this batch moved: their transitions and the tasks they held or unheld.
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
          p.change.update.claimableAt <= soon,
      )
      // Under flow control a run that ended gave its scope room (SPEC §20.1): rows waiting on
      // it in other processes' view may start now, not at their next poll.
      const freed =
        Limited.limiting(env.options.limits) && committed.results.some((r) => r !== "fenced-out")
      if (due || freed) yield* Effect.ignore(signal.notify)
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
