/**
 * `StoreAdmin` listings refuse a bad `limit` (issue 28: bounds for every size-like option):
 * `recent` clamped 0 to 1 and 1e9 to a page without a word; now each is an `InvalidOption`
 * naming `limit` and the value, as `tasks` and `ledger` already were. Nothing is written.
 */
import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import { Schedule } from "@tickwork/core"
import { Effect } from "effect"
import { StoreAdmin } from "../src/index.ts"
import { advance, recording, sqlite, tempDir, withScheduler } from "./helpers.ts"

const sha = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex")

describe("StoreAdmin limits", () => {
  it.effect(
    "recent: a limit outside 1..MAX_LIMIT is an InvalidOption naming limit; 1 and the bound read",
    () =>
      Effect.gen(function* () {
        const t = tempDir()
        const file = t.file()
        const { handler } = recording()
        yield* withScheduler(sqlite(file), { handlers: [handler] }, (d) =>
          Effect.gen(function* () {
            yield* d.schedule({
              id: "r",
              handler,
              payload: { n: 1 },
              schedule: Schedule.fixedRate(100),
            })
            yield* advance(d, 250)
          }),
        )
        const before = sha(file)
        yield* Effect.scoped(
          Effect.gen(function* () {
            const admin = yield* StoreAdmin.open(file, { readOnly: true })
            for (const limit of [0, -1, 2.5, Number.NaN, StoreAdmin.MAX_LIMIT + 1, 1e9]) {
              const e = yield* Effect.flip(admin.recent(limit))
              expect(e).toMatchObject({ _tag: "InvalidOption", field: "limit" })
              expect(Object.is((e as { value: unknown }).value, limit)).toBe(true)
              expect(e.message).toContain(
                `limit must be a whole number from 1 to ${StoreAdmin.MAX_LIMIT}`,
              )
            }
            expect(yield* admin.recent(1)).toHaveLength(1)
            expect((yield* admin.recent(StoreAdmin.MAX_LIMIT)).length).toBeGreaterThan(1)
          }),
        )
        expect(sha(file)).toBe(before)
        t.cleanup()
      }),
  )
})
