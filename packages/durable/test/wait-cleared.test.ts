/**
 * SPEC §20.4: a wait the claim recorded on a row belongs to the run as it was then. Pausing,
 * resuming or updating the row clears it in the same statement, so no stale wait shows (and
 * none hides the row's due time from the dispatcher) until a later claim records it afresh.
 * Each body only observes; the assertions run once every run has ended and the scheduler has
 * closed (a failed assertion mid-run would leave a run waiting on the virtual clock).
 */
import { describe, expect, it } from "@effect/vitest"
import { Schedule, type Task } from "@tickwork/core"
import { Clock, Effect, Option, Schema } from "effect"
import { type DurableScheduler, Handler } from "../src/index.ts"
import { advance, inFile, settle, sqlite, withScheduler } from "./helpers.ts"

/**
 * `m0` runs 0–100 ms in group `mail` (concurrency 1) and `m1` waits behind it from 0; at 50,
 * `body` acts on them. Returns what `body` saw, `m1`'s first wait and the runs' start times.
 */
const oneWaiting = <A>(
  file: string,
  body: (d: DurableScheduler.DurableSchedulerShape) => Effect.Effect<A, unknown>,
) => {
  const starts = new Map<string, number>()
  const handler = Handler.make("work", Schema.Struct({ ms: Schema.Number }), (p, run) =>
    Effect.gen(function* () {
      starts.set(run.id, yield* Clock.currentTimeMillis)
      yield* Effect.sleep(p.ms)
    }),
  )
  return Effect.map(
    withScheduler(
      sqlite(file),
      { handlers: [handler], workers: 4, limits: { groups: { mail: { concurrency: 1 } } } },
      (d) =>
        Effect.gen(function* () {
          for (const id of ["m0", "m1"]) {
            yield* d.schedule({
              id,
              handler,
              payload: { ms: 100 },
              schedule: Schedule.once(0),
              group: "mail",
            })
          }
          yield* settle(d)
          const first = yield* waitOf(d, "m1")
          yield* advance(d, 50)
          return { first, seen: yield* body(d) }
        }),
    ),
    (r) => ({ ...r, starts }),
  )
}

const waitOf = (d: DurableScheduler.DurableSchedulerShape, id: string) =>
  Effect.map(d.info(id), (o): Task.WaitInfo | undefined => Option.getOrThrow(o).waiting)

const FIRST = { cause: "concurrency", scope: "group:mail", since: 0 }
const NONE = { concurrency: 0, "rate-limited": 0 }

describe("a recorded wait is cleared by pause, resume and update (SPEC §20.4)", () => {
  it.effect("paused then resumed, the row shows no wait from before the pause", () =>
    inFile((file) =>
      Effect.gen(function* () {
        const { first, seen, starts } = yield* oneWaiting(file, (d) =>
          Effect.gen(function* () {
            const paused = yield* d.pause("m1")
            const resumed = yield* d.resume("m1")
            yield* settle(d)
            const afterResume = yield* waitOf(d, "m1")
            // m0 ends at 100 and m1 runs 100–200: both end before the scheduler closes.
            yield* advance(d, 100)
            const afterStart = yield* waitOf(d, "m1")
            yield* advance(d, 100)
            return { paused, resumed, afterResume, afterStart, stats: (yield* d.stats).waiting }
          }),
        )
        expect(first).toEqual(FIRST)
        expect([seen.paused, seen.resumed]).toEqual([true, true])
        // m0 still ran at 50: the claim after the resume may record the wait again, from 50.
        expect(seen.afterResume?.since ?? 50).toBe(50)
        expect(seen.afterStart).toBeUndefined()
        expect(seen.stats).toEqual(NONE)
        expect(starts.get("m1")).toBe(100)
      }),
    ),
  )

  it.effect("updated to a later slot, the row waits for nothing and runs at its new slot", () =>
    inFile((file) =>
      Effect.gen(function* () {
        const { first, seen, starts } = yield* oneWaiting(file, (d) =>
          Effect.gen(function* () {
            const updated = yield* d.update("m1", { schedule: Schedule.once(1_000) })
            yield* settle(d)
            const afterUpdate = yield* waitOf(d, "m1")
            const stats = (yield* d.stats).waiting
            // A new schedule counts from the update (at 50): m1's slot is 1,050. m0 ends at 100;
            // nothing else wakes the dispatcher before that slot.
            yield* advance(d, 100)
            yield* advance(d, 900)
            yield* advance(d, 100)
            return { updated, afterUpdate, stats }
          }),
        )
        expect(first).toEqual(FIRST)
        expect(seen.updated).toBe(true)
        expect(seen.afterUpdate).toBeUndefined()
        expect(seen.stats).toEqual(NONE)
        expect(starts.get("m1")).toBe(1_050)
      }),
    ),
  )
})
