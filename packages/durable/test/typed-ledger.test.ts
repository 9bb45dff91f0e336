/**
 * `DurableScheduler.ledgerOf(durable, handler, id)` (SPEC §19.3): the ledger with each run's
 * kept result decoded by the handler's `result` schema, typed as that schema's type (a `Date`
 * comes back a `Date`); a handler with no result schema, or not the task's, is an
 * `InvalidOption` naming `handler`. SQLite on virtual time.
 */
import { describe, expect, it } from "@effect/vitest"
import { Schedule } from "@tickwork/core"
import { Effect, Schema } from "effect"
import { DurableScheduler, Handler } from "../src/index.ts"
import { advance, inFile, sqlite, withScheduler } from "./helpers.ts"

const Receipt = Schema.Struct({ charged: Schema.Number, at: Schema.DateFromString })
const charge = Handler.make(
  "charge",
  Schema.Struct({ cents: Schema.Number }),
  (p) => Effect.succeed({ charged: p.cents, at: new Date(Date.UTC(2026, 0, 1)) }),
  { result: Receipt },
)
const plain = Handler.make("plain", Schema.Struct({}), () => Effect.void)

describe("ledgerOf (SPEC §19.3)", () => {
  it.effect("gives each run's kept result typed by the handler's result schema", () =>
    inFile((file) =>
      withScheduler(sqlite(file), { handlers: [charge, plain] }, (d) =>
        Effect.gen(function* () {
          yield* d.schedule({
            id: "c",
            handler: charge,
            payload: { cents: 250 },
            schedule: Schedule.once(5),
          })
          yield* d.schedule({ id: "p", handler: plain, payload: {}, schedule: Schedule.once(5) })
          yield* advance(d, 5)
          const ledger = yield* DurableScheduler.ledgerOf(d, charge, "c")
          const values = ledger.flatMap((o) => (o.kind === "ran" ? [o.value] : []))
          // Typed: `charged` is a number and `at` a Date, with no cast.
          const first: { readonly charged: number; readonly at: Date } | undefined = values[0]
          expect(first?.charged).toBe(250)
          expect(first?.at.getTime()).toBe(Date.UTC(2026, 0, 1))
          expect(yield* DurableScheduler.ledgerOf(d, charge, "c", { generation: 2 })).toEqual([])

          const notTheTasks = yield* Effect.flip(DurableScheduler.ledgerOf(d, charge, "p"))
          expect(notTheTasks).toMatchObject({
            _tag: "InvalidOption",
            field: "handler",
            value: "charge",
          })
          expect(notTheTasks.message).toContain('runs handler "plain"')
          const keepsNone = yield* Effect.flip(DurableScheduler.ledgerOf(d, plain, "p"))
          expect(keepsNone).toMatchObject({
            _tag: "InvalidOption",
            field: "handler",
            value: "plain",
          })
        }),
      ),
    ),
  )
})
