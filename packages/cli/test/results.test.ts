/**
 * Kept results in the store commands (SPEC §19.3): `status` shows the latest run's result and
 * `ledger` each run's, as the stored JSON text (no schema is at hand in the CLI), cut to a
 * readable length, escaped like every other stored field; `--json` gives all of it. A result
 * not kept shows why.
 */
import { describe, expect, it } from "@effect/vitest"
import { Schedule } from "@tickwork/core"
import { DurableScheduler, Handler, StoreAdmin } from "@tickwork/durable"
import { Effect, Schema } from "effect"
import { TestClock } from "effect/testing"
import * as Dashboard from "../src/Dashboard.ts"
import { sqlite, T0, tempStore } from "./store.ts"
import { lines, tickwork } from "./support.ts"

/** Returns `{ note }`: its payload's text, as the result. */
const echo = Handler.make(
  "echo",
  Schema.Struct({ note: Schema.String }),
  (p) => Effect.succeed({ note: p.note }),
  { result: Schema.Struct({ note: Schema.String }) },
)

/** Any character a terminal could take as a command: C0 but a line feed, DEL, C1, bidi. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/

const seeded = (file: string) =>
  Effect.scoped(
    Effect.gen(function* () {
      yield* TestClock.setTime(T0)
      const { durable: d } = yield* DurableScheduler.make({
        handlers: [echo],
        owner: "worker-a",
        maxResultBytes: 1_000,
      })
      const once = Schedule.once(1_000)
      yield* d.schedule({ id: "short", handler: echo, payload: { note: "paid" }, schedule: once })
      // C1 CSI, DEL and a bidirectional override: JSON leaves these raw.
      yield* d.schedule({
        id: "evil",
        handler: echo,
        payload: { note: "a\u009b31m\u007f\u202eb" },
        schedule: once,
      })
      yield* d.schedule({
        id: "long",
        handler: echo,
        payload: { note: "y".repeat(500) },
        schedule: once,
      })
      yield* d.schedule({
        id: "huge",
        handler: echo,
        payload: { note: "z".repeat(2_000) },
        schedule: once,
      })
      for (let k = 0; k < 10_000 && !(yield* d.idle); k++) yield* Effect.yieldNow
      yield* TestClock.adjust(1_000)
      for (let k = 0; k < 10_000 && !(yield* d.idle); k++) yield* Effect.yieldNow
    }),
  ).pipe(Effect.provide(sqlite(file)))

describe("kept results in status and ledger (SPEC §19.3)", () => {
  it.effect("shown cut, escaped, or as the reason none was kept; --json gives all", () =>
    Effect.gen(function* () {
      const t = tempStore()
      yield* seeded(t.file)
      const status = lines(yield* tickwork("status", "short", "--store", t.file))
      expect(status.at(-1)).toBe('last result        {"note":"paid"}')
      const ledger = lines(yield* tickwork("ledger", "short", "--store", t.file))
      expect(ledger[1]).toMatch(/-> done; result \{"note":"paid"\}$/)

      const evil = [
        yield* tickwork("status", "evil", "--store", t.file),
        yield* tickwork("ledger", "evil", "--store", t.file),
      ]
      for (const out of evil) {
        expect(RAW.test(out.stdout), out.stdout).toBe(false)
        expect(out.stdout).toContain('{"note":"a\\x9b31m\\x7f\\u202eb"}')
      }

      const long = lines(yield* tickwork("status", "long", "--store", t.file)).at(-1)
      expect(long).toBe(
        `last result        {"note":"${"y".repeat(391)}… (511 characters; --json shows all)`,
      )
      const info = JSON.parse(
        (yield* tickwork("status", "long", "--store", t.file, "--json")).stdout,
      ) as StoreAdmin.TaskDetails
      expect(info.lastResult?.json).toBe(JSON.stringify({ note: "y".repeat(500) }))
      const ledgerRow = lines(yield* tickwork("ledger", "long", "--store", t.file))[1]
      expect(ledgerRow).toContain(`result {"note":"${"y".repeat(71)}… (511 characters`)

      const huge = lines(yield* tickwork("status", "huge", "--store", t.file)).at(-1)
      expect(huge).toMatch(
        /^last result {8}not kept: ResultTooLarge: the result of task "huge" is 2011 bytes of JSON, over the limit of 1000 bytes/,
      )
      expect(lines(yield* tickwork("ledger", "huge", "--store", t.file))[1]).toContain(
        "; result not kept: ResultTooLarge",
      )

      // The dashboard's snapshot: a result cut to RESULT_SHOWN characters, the reason whole.
      const snap = yield* Effect.scoped(
        Effect.flatMap(StoreAdmin.open(t.file, { readOnly: true }), (admin) =>
          Dashboard.snapshot(admin, false),
        ),
      )
      const ran = (id: string) =>
        snap.recent.find((o) => o.kind === "ran" && o.taskId === id) as
          | DurableScheduler.Ran
          | undefined
      expect(ran("short")?.result).toBe('{"note":"paid"}')
      expect(ran("long")?.result).toBe(`{"note":"${"y".repeat(Dashboard.RESULT_SHOWN - 9)}…`)
      expect(ran("huge")?.resultError).toMatch(/^ResultTooLarge: /)
      t.cleanup()
    }),
  )
})
