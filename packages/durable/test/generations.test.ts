/**
 * Each generation of a durable id keeps its own ledger (SPEC §27.4): scheduling a final id
 * again starts generation 2, and generation 1's runs stay readable by generation.
 */
import { describe, expect, it } from "@effect/vitest"
import { Schedule } from "@tickwork/core"
import { Effect, Schema } from "effect"
import { Handler } from "../src/index.ts"
import { advance, sqlite, tempDir, withScheduler } from "./helpers.ts"

describe("the ledger of each generation of a durable id", () => {
  it.effect("keeps generation 1's runs when the id is scheduled again, read by generation", () =>
    Effect.gen(function* () {
      const t = tempDir()
      const job = Handler.make("job", Schema.Struct({ fail: Schema.Boolean }), (p) =>
        p.fail ? Effect.fail("no") : Effect.void,
      )
      yield* withScheduler(
        sqlite(t.file()),
        { handlers: [job], runtime: { logFailures: false } },
        (d) =>
          Effect.gen(function* () {
            const once = { id: "report", handler: job, schedule: Schedule.once(10) }
            yield* d.schedule({ ...once, payload: { fail: true } })
            yield* advance(d, 20)
            expect(yield* d.status("report")).toBe("failed")
            yield* d.schedule({ ...once, payload: { fail: false } })
            yield* advance(d, 20)
            const runs = (l: ReadonlyArray<{ readonly kind: string }>) =>
              l.flatMap((o) => ("outcome" in o ? [`${o.kind}:${String(o.outcome)}`] : []))
            expect(runs(yield* d.ledger("report", { generation: 1 }))).toEqual(["ran:failed"])
            expect(runs(yield* d.ledger("report", { generation: 2 }))).toEqual(["ran:succeeded"])
            expect(runs(yield* d.ledger("report"))).toEqual(["ran:failed", "ran:succeeded"])
            const bad = yield* Effect.flip(d.ledger("report", { generation: 1.5 }))
            expect(bad).toMatchObject({ _tag: "InvalidOption", field: "generation", value: 1.5 })
          }),
      )
      t.cleanup()
    }),
  )
})
