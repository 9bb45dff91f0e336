/**
 * SPEC §6.9: a finished task's info shows the attempt that ran last (core's `Rules.settle`, as
 * in memory), and its last failure stays after a later success, with `StoreAdmin.info` saying
 * when it was and that a run succeeded since. SQLite on virtual time.
 */
import { describe, expect, it } from "@effect/vitest"
import { Schedule } from "@tickwork/core"
import { Effect, Option, Schema } from "effect"
import { Handler, StoreAdmin } from "../src/index.ts"
import { advance, inFile, sqlite, withScheduler } from "./helpers.ts"

/** Fails its first run, succeeds after. */
const flaky = () => {
  let runs = 0
  return Handler.make("flaky", Schema.Struct({}), () =>
    Effect.suspend(() => {
      runs += 1
      return runs === 1 ? Effect.fail("first try") : Effect.void
    }),
  )
}

describe("a task's info after its retry succeeded (SPEC §6.9)", () => {
  it.effect("shows attempt 2, and the last failure with its time", () =>
    inFile((file) =>
      Effect.gen(function* () {
        const handler = flaky()
        yield* withScheduler(sqlite(file), { handlers: [handler] }, (d) =>
          Effect.gen(function* () {
            yield* d.schedule({
              id: "o",
              handler,
              payload: {},
              schedule: Schedule.once(10),
              retry: { maxRetries: 2, base: 5 },
            })
            yield* advance(d, 100)
            expect(Option.getOrThrow(yield* d.info("o"))).toMatchObject({
              state: "done",
              attempt: 2,
              lastError: '"first try"',
            })
          }),
        )
        yield* Effect.scoped(
          Effect.gen(function* () {
            const admin = yield* StoreAdmin.open(file, { readOnly: true })
            const info = yield* admin.info("o")
            const failed = (yield* admin.ledger("o")).find(
              (o) => o.kind === "ran" && o.outcome === "failed",
            )
            expect(info).toMatchObject({ state: "done", attempt: 2, lastError: '"first try"' })
            expect(info.lastFailureAt).toEqual({
              at: failed?.kind === "ran" ? failed.finishedAt : -1,
              succeededSince: true,
            })
          }),
        )
      }),
    ),
  )
})
