/**
 * @internal
 * Liveness from the database session (a shared store, SPEC §17). The keeper holds this
 * process's session — a dedicated connection holding its owner lock and listening for other
 * processes' notices — for the process's whole life. While it holds it, the process claims work
 * and, every `takeoverMs`, makes due at once the claims of processes whose session ended. When
 * it is lost, the process stops claiming, interrupts its runs in flight (another process may
 * hold them a moment later; their completions are fenced out unless still ours), reports the
 * outage once, and opens a new session with backoff.
 */
import { Effect, Metric, Queue } from "effect"
import { StoreError } from "../Errors.ts"
import type { Env } from "./env.ts"
import { storeError } from "./failure.ts"

/** Sessions this process lost (counted once per loss, not per failed reconnect). */
const sessionLosses = Metric.counter("tickwork_durable_session_losses_total", {
  description:
    "times this process lost its database session (its liveness lock): it stops claiming until it holds one again",
})

/** Claims taken over from processes whose database session ended. */
const takeovers = Metric.counter("tickwork_durable_takeovers_total", {
  description: "runs made due at once because their owner's database session ended",
})

/** How often the held session is checked with a round trip (a dead TCP peer answers nothing). */
const PING_MS = 5_000

/** The claims of ended sessions, made due at once; wakes this process and tells the others. */
const takeOverOnce = (env: Env, mine: boolean): Effect.Effect<void> =>
  Effect.gen(function* () {
    const takeOver = env.store.takeOver
    if (takeOver === undefined) return
    const taken = yield* takeOver(env.owner, env.now(), mine).pipe(
      Effect.tap(() => env.outage.worked),
      Effect.catch((e) => Effect.as(env.outage.failed(e), [])),
    )
    if (taken.length === 0) return
    env.counters.takenOver += taken.length
    yield* Metric.update(takeovers, taken.length)
    env.wakeup.wake()
    if (env.store.signal !== undefined) yield* Effect.ignore(env.store.signal.notify)
    const owners = [...new Set(taken.map((t) => t.owner))]
    yield* Effect.logInfo(
      `tickwork durable: took over ${taken.length} run(s) of ${owners.join(", ")} (database session ended): due again at once`,
    )
  })

/** While the session is held: notices wake the dispatcher; ended sessions are taken over. */
const whileHeld = (
  env: Env,
  session: {
    readonly notices: Queue.Dequeue<unknown, unknown>
    readonly ping: Effect.Effect<void, StoreError>
  },
): Effect.Effect<never, StoreError> => {
  const notices = Effect.forever(
    Effect.gen(function* () {
      yield* Queue.take(session.notices)
      env.wakeup.wake()
    }),
  ).pipe(
    Effect.mapError((e) =>
      e instanceof StoreError ? e : storeError("listen for other processes", e),
    ),
  )
  const ping = Effect.forever(
    Effect.gen(function* () {
      yield* Effect.sleep(PING_MS)
      yield* session.ping.pipe(
        Effect.timeoutOrElse({
          duration: PING_MS,
          orElse: () =>
            Effect.fail(
              storeError(
                "check this process's session",
                new Error(`no answer within ${PING_MS} ms`),
              ),
            ),
        }),
      )
    }),
  )
  const takeover = Effect.forever(
    Effect.andThen(Effect.sleep(env.options.takeoverMs), takeOverOnce(env, false)),
  )
  return Effect.raceFirst(Effect.raceFirst(notices, ping), takeover)
}

/** Interrupts the runs in flight: with the session gone, they may belong to another process. */
const dropHeld = (env: Env): Effect.Effect<void> =>
  Effect.suspend(() => {
    const live = [...env.held.values()].filter((h) => !h.finished && !h.lost)
    if (live.length === 0) return Effect.void
    for (const h of live) {
      h.lost = true
      h.releasing = true
      env.counters.leasesLost++
    }
    return Effect.andThen(
      Effect.logWarning(
        `tickwork durable: interrupting ${live.length} run(s) in flight: without its database session this process cannot prove it still holds them`,
      ),
      env.pool.interrupt((t) => live.includes(t)),
    )
  })

/** The session keeper: holds the session, and opens a new one (with backoff) when it is lost. */
export const keeper = (env: Env): Effect.Effect<void> =>
  Effect.gen(function* () {
    const open = env.store.session
    if (open === undefined) return
    let first = true
    let failures = 0
    let lostAt: number | undefined
    for (;;) {
      const ended = yield* Effect.scoped(
        Effect.gen(function* () {
          const session = yield* open(env.owner)
          failures = 0
          if (lostAt !== undefined) {
            yield* Effect.logInfo(
              `tickwork durable: holds its database session again after ${Math.round(env.mono() - lostAt)} ms; claiming again`,
            )
            lostAt = undefined
          }
          // A process started under the name of one that died: that one's claims are not ours.
          yield* takeOverOnce(env, first)
          first = false
          env.session.held = true
          env.wakeup.wake()
          return yield* whileHeld(env, session)
        }),
      ).pipe(Effect.flip)
      const wasHeld = env.session.held
      env.session.held = false
      if (wasHeld) {
        lostAt = env.mono()
        env.counters.sessionsLost++
        yield* Metric.update(sessionLosses, 1)
        yield* Effect.logWarning(
          `tickwork durable: lost its database session (${ended.message}); claiming nothing until it holds a new one`,
        ).pipe(Effect.annotateLogs({ reason: ended.reason }))
        yield* dropHeld(env)
      } else yield* env.outage.failed(ended)
      failures++
      yield* Effect.sleep(Math.min(5_000, 50 * 2 ** Math.min(failures, 7)))
    }
  })
