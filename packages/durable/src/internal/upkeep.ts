/**
 * @internal
 * Upkeep beside the runs: listening for other processes' notices that work is due soon
 * (PostgreSQL `LISTEN`), and pruning ledger rows and final tasks past their retention.
 */
import { Effect, Queue, Result } from "effect"
import { StoreError } from "../Errors.ts"
import { MAX_SLEEP_MS } from "./dispatcher.ts"
import type { Env } from "./env.ts"
import { storeError } from "./failure.ts"
import * as Limited from "./limited.ts"

/** Other processes' notices that work is due soon: look now instead of at the next poll. */
export const listener = (env: Env): Effect.Effect<void> =>
  Effect.gen(function* () {
    const signal = env.store.signal
    if (signal === undefined) return
    /** Whether the LISTEN connection is lost (logged once until it is back). */
    let down = false
    for (;;) {
      const listened = yield* Effect.result(
        Effect.scoped(
          Effect.gen(function* () {
            const notices = yield* signal.listen
            if (down) {
              down = false
              yield* Effect.logInfo("tickwork durable: listening for other processes again")
            }
            for (;;) {
              yield* Queue.take(notices)
              env.wakeup.wake()
            }
          }),
        ),
      )
      if (Result.isFailure(listened)) {
        const e =
          listened.failure instanceof StoreError
            ? listened.failure
            : storeError("listen for other processes", listened.failure)
        if (!down) {
          down = true
          yield* Effect.logWarning(
            `tickwork durable: lost the LISTEN connection for other processes' notices: ${e.message.replace(/^the task store failed to [^:]*: /, "")}; polling only, listening again every 5 s (logged once until it works)`,
          ).pipe(Effect.annotateLogs({ reason: e.reason }))
        }
      }
      yield* Effect.sleep(5_000)
    }
  })

/** Deletes ledger rows and final tasks older than the retention, now and then. */
export const pruner = (env: Env): Effect.Effect<never> =>
  Effect.forever(
    Effect.gen(function* () {
      const retentionMs = env.options.retentionMs
      const now = env.now()
      const before = now - retentionMs
      // A rate window longer than the retention keeps its starts for the window (SPEC §20.2).
      const starts = Limited.startCutoffs(env.options.limits, now, before)
      yield* env.store.prune(before, starts).pipe(Effect.catch(env.outage.failed))
      yield* Effect.sleep(Math.min(MAX_SLEEP_MS, Math.max(60_000, Math.floor(retentionMs / 100))))
    }),
  )
