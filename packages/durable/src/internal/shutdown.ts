/**
 * @internal
 * Closing a durable scheduler within one budget. Every wait is measured against a single
 * deadline on the monotonic clock, taken when closing starts:
 *
 * ```
 * 0 ──── drain (policy drain/cancel) ──── shutdownTimeout ──── interrupt + hand back ──── + shutdownGrace
 *        runs finish and commit                 │  interrupts sent, not awaited               │
 *                                               └ policy interrupt starts here at 0           └ stop waiting:
 *                                                                                                name what is left
 * ```
 *
 * The in-memory runtime beside it closes at the same time, under its own `shutdownTimeout` and
 * `shutdownGrace` where given, but never longer than these: under policy `interrupt` it may
 * take up to `shutdownTimeout + shutdownGrace`, the bound of the whole close.
 *
 * The grace is the time interrupted runs get to end (their finalizers run) and their hand-back
 * to commit; a healthy store commits one in milliseconds, so its whole length is only spent
 * when a job ignores interruption or the store fails. Nothing here waits on a fiber or the
 * store without the time left: a job masking interruption, a claim or a commit the store never
 * answers, cannot lengthen the close. What did not get back to the store by then is named in a
 * warning and in the report; those rows stay `running` under this process's lease, so they run
 * again when it expires, when the session ends (PostgreSQL) or when the file is reopened (SQLite).
 */
import { Effect, Fiber, Option } from "effect"
import type { Env } from "./env.ts"
import type { ShutdownReport } from "./options.ts"

/** What the close needs besides the shared parts. */
export interface Parts {
  /** The dispatcher: it ends at its next step once `stop` is called. */
  readonly dispatcher: Fiber.Fiber<unknown, unknown>
  /** Tells the dispatcher to claim nothing more. */
  readonly stop: () => void
  /** Closes the in-memory runtime beside it (its own timeout and grace are the same budget). */
  readonly closeRuntime: Effect.Effect<void>
}

/** Closes `env` under its policy within `shutdownTimeout + shutdownGrace`; returns the report. */
export const close = (env: Env, parts: Parts): Effect.Effect<ShutdownReport> =>
  Effect.gen(function* () {
    const o = env.options
    const startedAt = env.mono()
    // A damaged store takes no commit: nothing is worth waiting for.
    const damaged = env.fatal.error !== undefined
    const interruptAt = o.shutdown === "interrupt" || damaged ? 0 : o.shutdownMs
    const endAt = damaged ? 0 : interruptAt + o.graceMs
    /** The ms left until `at` (ms after closing started), never negative. */
    const left = (at: number): number => Math.max(0, at - (env.mono() - startedAt))
    const completedBefore = env.counters.completed
    const releasedBefore = env.counters.released
    env.closing.closed = true
    parts.stop()
    env.wakeup.wake()
    // The in-memory runtime closes at the same time, under the same timeout and grace.
    const runtime = yield* Effect.forkChild(parts.closeRuntime, { startImmediately: true })
    // The dispatcher ends at its next step; one stuck in a claim the store never answers is
    // cut off (a claim cut off on PostgreSQL is taken over when the session ends).
    const stopped = yield* Effect.timeoutOption(
      Effect.asVoid(Fiber.await(parts.dispatcher)),
      left(interruptAt),
    )
    if (Option.isNone(stopped)) parts.dispatcher.interruptUnsafe()
    const drained =
      o.shutdown === "interrupt"
        ? Option.none()
        : yield* Effect.timeoutOption(env.held.drained, left(interruptAt))
    if (Option.isNone(drained)) {
      for (const h of env.held.values()) h.releasing = true
      // Interrupted runs end as interruptions and the completion hands them back. Not awaited
      // here: a job that masks interruption cannot hold the close.
      env.pool.interruptAllUnsafe()
      yield* Effect.timeoutOption(env.held.drained, left(endAt))
    }
    // Released rows are due now: other processes need not wait for their next poll.
    const signal = env.store.signal
    if (env.counters.released > releasedBefore && signal !== undefined && left(endAt) > 0) {
      yield* Effect.timeoutOption(Effect.ignore(signal.notify), left(endAt))
    }
    // The runtime's own timeout and grace are at most the durable ones: it is done by then.
    yield* Effect.timeoutOption(Fiber.await(runtime), left(o.shutdownMs + o.graceMs))
    const abandoned: Array<string> = []
    const uncommitted: Array<string> = []
    for (const h of env.held.values()) {
      if (h.started && !h.finished) abandoned.push(h.row.id)
      else uncommitted.push(h.row.id)
    }
    const report: ShutdownReport = {
      policy: o.shutdown,
      elapsedMs: env.mono() - startedAt,
      completed: env.counters.completed - completedBefore,
      released: env.counters.released - releasedBefore,
      abandoned,
      uncommitted,
    }
    if (abandoned.length > 0 || uncommitted.length > 0) {
      yield* Effect.logWarning(
        `tickwork durable: closed after ${o.shutdownMs} ms + ${o.graceMs} ms grace with ${abandoned.length + uncommitted.length} run(s) not handed back; their rows stay running until their lease expires or the store is reopened${describe("still running (ignoring interruption)", abandoned)}${describe("not committed (the store did not take them)", uncommitted)}`,
      ).pipe(Effect.annotateLogs({ owner: env.owner }))
    }
    yield* Effect.logInfo("tickwork durable scheduler closed").pipe(
      Effect.annotateLogs({
        owner: env.owner,
        policy: report.policy,
        elapsedMs: report.elapsedMs,
        completed: report.completed,
        released: report.released,
        abandoned: abandoned.length,
        uncommitted: uncommitted.length,
      }),
    )
    if (o.onShutdown !== undefined) {
      const callback = o.onShutdown
      const threw = yield* Effect.sync(() => {
        try {
          callback(report)
          return undefined
        } catch (error) {
          return { error }
        }
      })
      if (threw !== undefined) {
        yield* Effect.logError("tickwork durable: onShutdown threw; closed anyway", threw.error)
      }
    }
    return report
  })

/** `; <label>: a, b, c` (at most 20 ids named, then how many more), or nothing for none. */
const describe = (label: string, ids: ReadonlyArray<string>): string => {
  if (ids.length === 0) return ""
  const shown = ids.slice(0, 20).join(", ")
  return `; ${label}: ${shown}${ids.length > 20 ? ` and ${ids.length - 20} more` : ""}`
}
