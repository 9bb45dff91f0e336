/**
 * SPEC §19.1: a manual run was not scheduled, so it has no lateness. The ledger's LATE column
 * and the dashboard's snapshot show `manual` for it (core's `Task.countedLateness`), and a
 * scheduled run its lateness as before.
 */
import { describe, expect, it } from "@effect/vitest"
import { Schedule } from "@tickwork/core"
import {
  DurableScheduler as Durable,
  type DurableScheduler,
  Handler,
  StoreAdmin,
} from "@tickwork/durable"
import { Effect, Schema } from "effect"
import { TestClock } from "effect/testing"
import * as Dashboard from "../src/Dashboard.ts"
import { ledgerTable } from "../src/Store.ts"
import { sqlite, T0, tempStore } from "./store.ts"
import { lines, tickwork } from "./support.ts"

const noop = Handler.make("noop", Schema.Struct({}), () => Effect.void)

const ran = (manual: boolean | undefined, late: number): DurableScheduler.DurableOccurrence => ({
  kind: "ran",
  taskId: "t",
  generation: 1,
  slot: T0,
  attempt: 1,
  runAt: T0,
  startedAt: T0 + late,
  finishedAt: T0 + late + 5,
  outcome: "succeeded",
  error: null,
  fence: 1,
  owner: "worker-a",
  delivery: 1,
  state: "scheduled",
  nextRunAt: T0 + 60_000,
  ...(manual === undefined ? {} : { manual }),
})

/** A fixed-rate task that ran at 09:00 and was triggered by hand at 09:00:30. */
const seeded = (file: string) =>
  Effect.scoped(
    Effect.gen(function* () {
      yield* TestClock.setTime(T0)
      const { durable: d } = yield* Durable.make({ handlers: [noop], owner: "worker-a" })
      const settle = Effect.gen(function* () {
        for (let k = 0; k < 10_000 && !(yield* d.idle); k++) yield* Effect.yieldNow
      })
      yield* d.schedule({
        id: "r",
        handler: noop,
        payload: {},
        schedule: Schedule.fixedRate(60_000),
      })
      yield* settle
      yield* TestClock.adjust(30_000)
      yield* settle
      yield* d.trigger("r")
      yield* settle
    }),
  ).pipe(Effect.provide(sqlite(file)))

describe("a manual run's lateness (SPEC §19.1)", () => {
  it("the LATE column shows `manual` for a manual run, and a scheduled run's lateness", () => {
    const out = ledgerTable([ran(false, 40), ran(true, 2_239), ran(undefined, 7)]).split("\n")
    const late = out[0]?.indexOf("LATE") ?? -1
    expect(out.slice(1).map((l) => l.slice(late).split(/\s+/)[0])).toEqual([
      "40ms",
      "manual",
      "7ms",
    ])
  })

  it.effect("`tickwork ledger` and the dashboard's snapshot show a trigger's run as manual", () =>
    Effect.gen(function* () {
      const t = tempStore()
      yield* seeded(t.file)
      const rows = lines(yield* tickwork("ledger", "r", "--store", t.file))
      const late = rows[0]?.indexOf("LATE") ?? -1
      const cells = rows
        .slice(1)
        .filter((l) => l.includes("ran: "))
        .map((l) => l.slice(late).split(/\s+/)[0])
      expect(cells).toEqual(["0ms", "manual"])
      const snap = yield* Effect.scoped(
        Effect.flatMap(StoreAdmin.open(t.file, { readOnly: true }), (admin) =>
          Dashboard.snapshot(admin, false),
        ),
      )
      expect(snap.recent.filter((o) => o.kind === "ran").map((o) => o.late)).toEqual([null, 0])
      expect(snap.stats.lateness.runs).toBe(1)
      t.cleanup()
    }),
  )
})
