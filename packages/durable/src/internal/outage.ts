/**
 * @internal
 * Store outages: a failing store is reported once per outage (with its reason) and once when it
 * works again, never once per failed call; commits are retried until the store answers.
 */
import { Cause, Effect, Exit, Metric, Option } from "effect"
import { type StoreCorrupt, StoreError, type StoreFailure, storeCorrupt } from "../Errors.ts"
import type { TaskStoreShape } from "../TaskStore.ts"
import type { Context } from "./commit.ts"
import type { Counters } from "./held.ts"
import type { Change, Committed } from "./model.ts"

/** Store outages (counted once each, when they start or change their reason). */
const outages = Metric.counter("tickwork_durable_store_outages_total", {
  description:
    "times the task store stopped working for this process (a restart, a lost connection, a full disk): once per outage, not per failed call",
})

/** The outage reporter of one scheduler. */
export interface Outage {
  /** A failed store call: counted, and logged if it starts an outage (or changes its reason). */
  readonly failed: (e: StoreError) => Effect.Effect<void>
  /** When the outage in progress started (epoch ms), `undefined` while the store works. */
  readonly failingSince: () => number | undefined
  /** A store call worked: an outage, if any, ended. */
  readonly worked: Effect.Effect<void>
  /** A failed call's cause: a StoreError is an outage; anything else is a bug, logged in full. */
  readonly report: (what: string, cause: Cause.Cause<unknown>) => Effect.Effect<void>
  /**
   * Commits, retrying while the store fails (the fence keeps a late commit safe; an attempt
   * whose answer was lost is recognised by the store). Each attempt has the store's deadline.
   */
  readonly commit: (changes: ReadonlyArray<Change>, context: Context) => Effect.Effect<Committed>
}

/**
 * The outage reporter for `store`, counting failures in `counters`. A failure of reason
 * `corrupt` is no outage (retrying cannot mend a damaged file): the store's integrity check
 * describes the damage and `corrupt` hears of it, once.
 */
export const make = (
  store: TaskStoreShape,
  counters: Counters,
  corrupt: (e: StoreCorrupt) => Effect.Effect<void>,
  /** The scheduler's clock, epoch ms: when an outage started. */
  now: () => number,
): Outage => {
  let outage: { reason: StoreFailure; failures: number; since: number } | undefined
  let damaged = false
  const fatal = (e: StoreError): Effect.Effect<void> =>
    Effect.gen(function* () {
      if (damaged) return
      damaged = true
      const findings = store.integrity === undefined ? [] : yield* store.integrity.check
      // SQLITE_CORRUPT is SQLite's own finding: fatal even if the quick check misses the page.
      yield* corrupt(
        storeCorrupt(
          store.integrity?.filename ?? "(unknown)",
          `${e.detail} (while it tried to ${e.operation})${findings.length > 0 ? `; quick_check: ${findings.join("; ")}` : ""}`,
        ),
      )
    })
  const failed = (e: StoreError): Effect.Effect<void> =>
    Effect.suspend(() => {
      counters.storeFailures++
      if (e.reason === "corrupt") return fatal(e)
      if (outage !== undefined && outage.reason === e.reason) {
        outage.failures++
        return Effect.void
      }
      outage = { reason: e.reason, failures: 1, since: outage?.since ?? now() }
      return Effect.andThen(
        Metric.update(outages, 1),
        Effect.logWarning(
          `tickwork durable: ${e.message}; retrying until the store works again (logged once per outage)`,
        ).pipe(Effect.annotateLogs({ reason: e.reason, operation: e.operation })),
      )
    })
  const worked: Effect.Effect<void> = Effect.suspend(() => {
    if (outage === undefined) return Effect.void
    const { reason, failures } = outage
    outage = undefined
    return Effect.logInfo(
      `tickwork durable: the task store works again (${failures} failed attempt(s), ${reason})`,
    )
  })
  const report = (what: string, cause: Cause.Cause<unknown>): Effect.Effect<void> => {
    const error = Cause.findErrorOption(cause)
    return Option.isSome(error) && error.value instanceof StoreError
      ? failed(error.value)
      : Effect.logWarning(`tickwork durable: ${what} failed`, cause)
  }
  const commit = (changes: ReadonlyArray<Change>, context: Context): Effect.Effect<Committed> =>
    Effect.gen(function* () {
      for (let k = 0; ; k++) {
        const exit = yield* Effect.exit(store.commit(changes, context))
        if (Exit.isSuccess(exit)) {
          yield* worked
          return exit.value
        }
        yield* report("completing runs", exit.cause)
        yield* Effect.sleep(Math.min(5_000, 250 * 2 ** Math.min(k, 5)))
      }
    })
  return { failed, failingSince: () => outage?.since, worked, report, commit }
}
