/**
 * A task's ledger merges its runs and its events (`src/internal/ledger.ts`) in the order they
 * happened: by time, then by fence, then, at equal time and fence, a cancel or other event
 * before the run it cut short, slots a run's policy skipped or coalesced after it, and a resume
 * after the slots it skipped.
 */
import { describe, expect, it } from "vitest"
import { merge } from "../src/internal/ledger.ts"
import type { EventEntry, EventKind, RunEntry } from "../src/internal/model.ts"

const run = (finishedAt: number, fence: number): RunEntry =>
  ({ taskId: "t", generation: 1, finishedAt, fence }) as unknown as RunEntry

const event = (kind: EventKind | "resumed", at: number, fence: number | null): EventEntry =>
  ({ taskId: "t", generation: 1, kind, at, fence }) as unknown as EventEntry

/** What each merged entry is, with its time and fence. */
const shape = (list: ReturnType<typeof merge>) =>
  list.map((o) => `${o.kind}@${o.kind === "ran" ? o.finishedAt : o.at}/${o.fence}`)

describe("the durable ledger's order", () => {
  it("is by time first, whatever the kind and fence", () => {
    const got = merge([run(30, 1), run(10, 9)], [event("skipped", 20, 0), event("cancelled", 5, 9)])
    expect(shape(got)).toEqual(["cancelled@5/9", "ran@10/9", "skipped@20/0", "ran@30/1"])
  })

  it("then by fence, an event without one counting as 0", () => {
    const got = merge([run(10, 2)], [event("released", 10, 3), event("recovered", 10, null)])
    expect(shape(got)).toEqual(["recovered@10/null", "ran@10/2", "released@10/3"])
  })

  it("then a cancel, the run, the slots its policy skipped or coalesced, and a resume", () => {
    const events = [
      event("resumed", 10, 1),
      event("coalesced", 10, 1),
      event("cancelled", 10, 1),
      event("skipped", 10, 1),
    ]
    // Every order the entries could come in gives the same ledger.
    const expected = [
      "cancelled@10/1",
      "ran@10/1",
      "coalesced@10/1",
      "skipped@10/1",
      "resumed@10/1",
    ]
    for (let k = 0; k < events.length; k++) {
      const rotated = [...events.slice(k), ...events.slice(0, k)]
      const got = shape(merge([run(10, 1)], rotated))
      // Skipped and coalesced share a rank: they keep the order they were given in.
      expect(got.filter((s) => !s.startsWith("coalesced") && !s.startsWith("skipped"))).toEqual(
        expected.filter((s) => !s.startsWith("coalesced") && !s.startsWith("skipped")),
      )
      expect(got.slice(2, 4).sort()).toEqual(["coalesced@10/1", "skipped@10/1"])
    }
  })

  it("keeps a run's fields and marks it ran; an event is given as it is", () => {
    const e = event("fenced-out", 5, 1)
    const [first, second] = merge([run(7, 1)], [e])
    expect(first).toBe(e)
    expect(second).toStrictEqual({ kind: "ran", ...run(7, 1) })
    expect(merge([], [])).toEqual([])
  })
})
