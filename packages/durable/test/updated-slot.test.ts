/**
 * SPEC §15, §18.1: the `updated` entry of a changed schedule records the task's slot after the
 * change (its next slot), and the slot before it in `detail`; a change that leaves the slot
 * where it was records that slot and no `slot before`. By `ensure` and by `update`. SQLite on
 * virtual time (from epoch 0: the cron's 03:00 is 10,800,000 ms).
 */
import { describe, expect, it } from "@effect/vitest"
import { Schedule } from "@tickwork/core"
import { Effect, Option } from "effect"
import { inFile, recording, sqlite, withScheduler } from "./helpers.ts"

const { handler } = recording()
const H = 3_600_000
const report = (expression: string, n = 1) => ({
  id: "report",
  handler,
  payload: { n },
  schedule: Schedule.cron(expression),
})

describe("the `updated` entry's slot (SPEC §15, §18.1)", () => {
  it.effect("is the next slot after the change, with the slot before in its detail", () =>
    inFile((file) =>
      withScheduler(sqlite(file), { handlers: [handler] }, (d) =>
        Effect.gen(function* () {
          yield* d.ensure([report("0 3 * * *")])
          expect(Option.getOrThrow(yield* d.info("report")).slot).toBe(3 * H)
          yield* d.ensure([report("30 3 * * *")])
          yield* d.update("report", { schedule: Schedule.cron("0 4 * * *") })
          yield* d.update("report", { payload: { n: 2 } })
          const events = (yield* d.ledger("report")).flatMap((o) =>
            o.kind === "updated" ? [o] : [],
          )
          expect(events.map((o) => [o.firstSlot, o.lastSlot, o.cause, o.detail])).toEqual([
            [3.5 * H, 3.5 * H, "ensure", `schedule; slot before ${3 * H}`],
            [4 * H, 4 * H, "update", `schedule; slot before ${3.5 * H}`],
            [4 * H, 4 * H, "update", "payload"],
          ])
        }),
      ),
    ),
  )
})
