/**
 * @internal
 * Leases: a claim holds a run for a lease, renewed every third of it while the run goes on. A
 * run whose lease this process has not renewed for a whole lease (measured on the monotonic
 * clock: a stalled or suspended process, a store that does not answer) may belong to another
 * process by now: it is interrupted at once and handed back if the store still says it is ours.
 * Finished runs whose commit is late are reported once each.
 */
import { Effect, Metric } from "effect"
import type { Env, Wakeup } from "./env.ts"
import type { Held } from "./held.ts"

/** Finished runs not committed within a lease: counted here, and logged once each. */
const uncommittedRuns = Metric.counter("tickwork_durable_uncommitted_runs_total", {
  description:
    "runs that finished but were not committed within a lease (the store did not answer)",
})

/**
 * The guard's check: runs whose lease lapsed are interrupted (their end, an interruption, is
 * handed back by the completion), before anything else runs.
 */
export const dropLapsed = (env: Env): Effect.Effect<void> =>
  Effect.suspend(() => {
    if (env.held.size === 0) return Effect.void
    const at = env.mono()
    const leaseMs = env.options.leaseMs
    const lapsed: Array<Held> = []
    for (const h of env.held.values()) {
      if (!h.finished && !h.lost && at - h.renewedAt >= leaseMs) lapsed.push(h)
    }
    if (lapsed.length === 0) return Effect.void
    return Effect.forEach(
      lapsed,
      (h) =>
        Effect.gen(function* () {
          h.lost = true
          h.releasing = true
          env.counters.leasesLost++
          yield* Effect.logWarning(
            `tickwork durable: the lease of task ${h.row.id} (slot ${h.row.slot}) was not renewed for ${Math.round(at - h.renewedAt)} ms, more than the lease of ${leaseMs} ms (this process stalled or the store did not answer); another process may run it now: interrupting its run`,
          )
          yield* env.pool.interrupt((t) => t === h)
        }),
      // Stryker disable next-line ObjectLiteral,BooleanLiteral: equivalent, the interruptions' results are not read
      { discard: true },
    )
  })

/** Finished runs not committed within a lease: each is reported once. */
const watchUncommitted = (env: Env): Effect.Effect<void> =>
  Effect.suspend(() => {
    const at = env.mono()
    const leaseMs = env.options.leaseMs
    const overdue: Array<Held> = []
    for (const h of env.held.values()) {
      if (h.finishedAt >= 0 && !h.overdue && at - h.finishedAt >= leaseMs) overdue.push(h)
    }
    if (overdue.length === 0) return Effect.void
    for (const h of overdue) env.held.markOverdue(h)
    env.counters.uncommitted += overdue.length
    // Their lapsed leases no longer count in the store: a claim held back for their commits
    // (flow control, see the dispatcher) may go ahead now.
    env.wakeup.wake()
    return Effect.andThen(
      Metric.update(uncommittedRuns, overdue.length),
      Effect.logWarning(
        `tickwork durable: ${overdue.length} finished run(s) not committed after ${leaseMs} ms (the store does not answer; retrying): ${overdue
          .slice(0, 5)
          .map((h) => `${h.row.id}@${h.row.slot}`)
          .join(", ")}${overdue.length > 5 ? ", …" : ""}`,
      ),
    )
  })

/** Scheduler turns a watcher gives runs that are not going to start, end and commit. */
const SETTLE_TURNS = 4

/**
 * Whether runs are held and none is going: each is either queued to start (its fiber has not
 * run yet) or ended (only its commit is pending).
 */
// The mutants of noneGoing and of the settle turns below are equivalent: they only decide
// whether a timer is set that the last run's release cancels; each look is the same either way.
// Stryker disable next-line BlockStatement: equivalent, only saves a timer (see above)
const noneGoing = (env: Env): boolean => {
  // Stryker disable next-line ConditionalExpression,EqualityOperator,BooleanLiteral: equivalent, only saves a timer
  if (env.held.size === 0) return false
  // Stryker disable next-line LogicalOperator: equivalent, only saves a timer
  for (const h of env.held.values()) if (h.started && !h.finished) return false
  // Stryker disable next-line BooleanLiteral: equivalent, only saves a timer
  return true
}

/**
 * Waits `ms` while runs are held: `true` when they still are after it, `false` as soon as the
 * last one is let go (nothing left to watch: no timer fires for it).
 */
const whileHeld = (env: Env, wakeup: Wakeup, ms: number): Effect.Effect<boolean> =>
  Effect.gen(function* () {
    yield* env.held.holding.await
    // Runs that are only just starting or have ended need no watch yet: a handler with nothing
    // to wait for (as in a test) starts, ends and commits within a few scheduler turns of its
    // claim, and then no timer is set at all. A run still going after them, or a commit that
    // takes longer, is watched as before.
    // Stryker disable next-line EqualityOperator: equivalent, only saves a timer
    for (let turn = 0; turn < SETTLE_TURNS && noneGoing(env); turn++) yield* Effect.yieldNow
    // Wakes from an earlier emptying are stale: runs are held again now.
    // Stryker disable next-line CallExpression: equivalent, a stale wake only makes one more look, which finds what the next would
    wakeup.reset()
    // Stryker disable next-line BooleanLiteral: equivalent, only saves a timer
    if (env.held.size === 0) return false
    yield* wakeup.wait(ms)
    return env.held.size > 0
  })

/** Watches held runs on the monotonic clock, every tenth of a lease while runs are held. */
export const guard = (env: Env): Effect.Effect<never> => {
  const every = Math.max(10, Math.floor(env.options.leaseMs / 10))
  const wakeup = env.held.watch()
  return Effect.forever(
    Effect.gen(function* () {
      if (!(yield* whileHeld(env, wakeup, every))) return
      yield* dropLapsed(env)
      yield* watchUncommitted(env)
    }),
  )
}

/**
 * Renews the leases of the runs in flight, every third of a lease while runs are held. With none
 * held it parks (as the guard does) instead of waking for nothing: a first renewal is due a third
 * of a lease after the claim at the earliest, which the sleep after the latch still gives.
 */
export const renewer = (env: Env): Effect.Effect<never> => {
  const wakeup = env.held.watch()
  return Effect.forever(
    Effect.gen(function* () {
      const leaseMs = env.options.leaseMs
      if (!(yield* whileHeld(env, wakeup, Math.max(1, Math.floor(leaseMs / 3))))) return
      yield* dropLapsed(env)
      const live = [...env.held.values()].filter((h) => !h.finished && !h.lost)
      if (live.length === 0) return
      const sentAt = env.mono()
      const renewed = yield* env.store
        .renew(
          env.owner,
          live.map((h) => ({ id: h.row.id, fence: h.row.fence })),
          env.now(),
          leaseMs,
        )
        .pipe(
          Effect.tap(() => env.outage.worked),
          Effect.catch((e) => Effect.as(env.outage.failed(e), undefined)),
        )
      if (renewed === undefined) return
      for (const h of live) {
        if (renewed.has(h.row.id)) h.renewedAt = sentAt
        else if (!h.finished && !h.lost) {
          h.lost = true
          yield* Effect.logWarning(
            `tickwork durable: lost the lease of task ${h.row.id} (slot ${h.row.slot}); interrupting its run`,
          )
          yield* env.pool.interrupt((t) => t === h)
        }
      }
    }),
  )
}
