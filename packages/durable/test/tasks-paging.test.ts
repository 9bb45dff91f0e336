/**
 * What `DurableScheduler.tasks` returns, as its TSDoc says: a plain array in id order of at
 * most `limit` tasks after `after`, with no total — paged by calling again with the last id
 * until an array shorter than `limit` comes back. SQLite on virtual time.
 */
import { describe, expect, it } from "@effect/vitest"
import { Schedule } from "@tickwork/core"
import { Effect } from "effect"
import { inFile, recording, sqlite, withScheduler } from "./helpers.ts"

const { handler } = recording()

describe("tasks(filter) (its TSDoc)", () => {
  it.effect("is an array of at most `limit`, by id, paged with `after`", () =>
    inFile((file) =>
      withScheduler(sqlite(file), { handlers: [handler] }, (d) =>
        Effect.gen(function* () {
          for (const id of ["c", "a", "e", "b", "d"]) {
            yield* d.schedule({ id, handler, payload: { n: 1 }, schedule: Schedule.once(1_000) })
          }
          const pages: Array<Array<string>> = []
          let after: string | undefined
          for (;;) {
            const page = yield* d.tasks({ limit: 2, ...(after === undefined ? {} : { after }) })
            expect(Array.isArray(page)).toBe(true)
            pages.push(page.map((t) => t.id))
            if (page.length < 2) break
            after = page[page.length - 1]?.id
          }
          expect(pages).toEqual([["a", "b"], ["c", "d"], ["e"]])
        }),
      ),
    ),
  )
})
