/**
 * @internal
 * The store's tasks by state for the gauges (SPEC §17.13): one `GROUP BY` over the tasks, re-read
 * after a change this process made or saw (a wake), and every interval on a shared store (which
 * other processes change), never twice within one interval.
 */
import { Effect, Option } from "effect"
import type { Wakeup } from "./env.ts"
import type { Counts } from "./model.ts"

/**
 * Re-reads `read` into `set` for as long as it lives. Between reads it waits for a wake (or, on
 * a shared store, `refreshMs`); a wake that comes less than `refreshMs` after the last read waits
 * out the rest of that interval first. So an idle process whose last read is older than the
 * interval sleeps on no timer at all: in virtual time a change costs one read, no extra wake-up.
 * `mono` is a monotonic clock, ms.
 */
export const refresher = <A = Counts>(
  read: Effect.Effect<A, unknown>,
  set: (counts: A) => void,
  wakeup: Wakeup,
  options: { readonly shared: boolean; readonly refreshMs: number; readonly mono: () => number },
): Effect.Effect<never> =>
  Effect.gen(function* () {
    const { shared, refreshMs, mono } = options
    let lastRead = Number.NEGATIVE_INFINITY
    for (;;) {
      yield* shared ? wakeup.wait(refreshMs) : wakeup.wait()
      const since = mono() - lastRead
      if (since < refreshMs) yield* Effect.sleep(refreshMs - Math.max(0, since))
      // Changes that wake it from here on are after this read began: they are read next time.
      wakeup.reset()
      const counts = yield* Effect.option(read)
      lastRead = mono()
      if (Option.isSome(counts)) set(counts.value)
    }
  })
