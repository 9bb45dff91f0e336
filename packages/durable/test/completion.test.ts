/**
 * A finished run's change on its own (`src/internal/completion.ts`): a run handed back (no
 * outcome, or cut off by closing) and a run settled by the rules, each with the event recorded
 * instead when its claim was lost (SPEC §5.5, §6).
 */
import { Schedule, Task } from "@tickwork/core"
import { describe, expect, it } from "vitest"
import * as Completion from "../src/internal/completion.ts"
import type { Env, Finished } from "../src/internal/env.ts"
import type { Held } from "../src/internal/held.ts"
import type { TaskRow } from "../src/internal/model.ts"
import * as Rows from "../src/internal/rows.ts"
import * as Settle from "../src/internal/settle.ts"

/** Slots every 1_000 ms from 0. */
const grid = (Schedule.resolve(Schedule.fixedRate(1_000), 0) as Schedule.Resolved).plan

/** A running row at slot 1_000, its second attempt and third delivery. */
const claimed = (fields: Partial<TaskRow> = {}): TaskRow =>
  ({
    id: "t",
    generation: 2,
    handler: "h",
    plan: grid,
    state: "running",
    slot: 1_000,
    runAt: 1_000,
    claimableAt: 9_000,
    attempt: 2,
    runNumber: 4,
    consecutiveFailures: 0,
    deliveries: 3,
    fence: 7,
    revision: 11,
    leaseOwner: "p1",
    seq: 17,
    finishedAt: null,
    lastError: null,
    pausedReason: null,
    resumeFrom: -1,
    windowMs: null,
    restart: undefined,
    retry: { maxRetries: 3, base: 100, factor: 1, maxDelay: 100, jitter: "full" },
    missedRuns: "skip",
    pauseAfter: 0,
    tags: [],
    kept: undefined,
    ...fields,
  }) as unknown as TaskRow

const held = (fields: Partial<Held> = {}, row = claimed()): Held => ({
  key: `${row.id}@${row.fence}`,
  row,
  runNumber: 5,
  started: true,
  startedAt: 1_010,
  finished: true,
  lost: false,
  releasing: false,
  renewedAt: 0,
  finishedAt: 0,
  overdue: false,
  ...fields,
})

/** A process `p1` at 2_000 whose pushes count from 40 and whose jitter draws 0.25. */
const envOf = () => {
  let seq = 39
  return {
    owner: "p1",
    now: () => 2_000,
    nextSeq: () => ++seq,
    options: { windowMs: 60_000 },
    random: { next: () => 0.25 },
  } as unknown as Env
}

const finished = (h: Held, outcome: Task.Outcome | undefined): Finished => ({
  held: h,
  outcome,
  startedAt: 1_010,
  finishedAt: 1_500,
})

describe("a run handed back (SPEC §5.5)", () => {
  it("due again at its run_at, recorded as released, or as fenced out if its claim was lost", () => {
    const h = held()
    const change = Completion.handBack(envOf(), h, 1_800)
    expect(change.id).toBe("t")
    expect(change.fence).toBe(7)
    expect(change.update).toStrictEqual(Rows.handBack(h.row, 1_800, true))
    expect(change.events).toHaveLength(1)
    expect(change.events[0]).toMatchObject({
      kind: "released",
      cause: "interrupted",
      detail: "attempt 2, delivery 3",
      owner: "p1",
      at: 1_800,
      fence: 7,
    })
    expect(change.fencedOut).toMatchObject({
      kind: "fenced-out",
      detail: "release after the lease was lost",
      owner: "p1",
      at: 1_800,
    })
  })

  it("one that never started is not a delivery", () => {
    const h = held({ started: false })
    const change = Completion.handBack(envOf(), h, 1_800)
    expect(change.update.deliveries).toBe(2)
    expect(change.events[0]?.cause).toBe("not started")
  })

  it("is decided again on the row the commit finds: a pause asked for since is kept", () => {
    const h = held()
    const change = Completion.handBack(envOf(), h, 1_800)
    const fresh = claimed({ pausedReason: "manual" })
    const again = change.redecide?.(fresh)
    expect(again?.update).toStrictEqual(Rows.handBack(fresh, 1_800, true))
    expect(again?.update).toMatchObject({ state: "paused", pausedReason: "manual" })
    expect(again?.events).toBe(change.events)
  })
})

describe("a finished run's change (load row → Rules.settle → store row)", () => {
  it("no outcome: handed back now", () => {
    const { change, ran } = Completion.toChange(envOf(), finished(held(), undefined))
    expect(ran).toBeUndefined()
    expect(change.update).toStrictEqual(Rows.handBack(claimed(), 2_000, true))
    expect(change.events[0]?.at).toBe(2_000)
  })

  it("interrupted while closing: handed back when it ended", () => {
    const h = held({ releasing: true })
    const { change, ran } = Completion.toChange(envOf(), finished(h, { kind: "interrupted" }))
    expect(ran).toBeUndefined()
    expect(change.update).toStrictEqual(Rows.handBack(h.row, 1_500, true))
    // Interrupted while not closing, it is an outcome the rules settle.
    const settled = Completion.toChange(envOf(), finished(held(), { kind: "interrupted" }))
    expect(settled.ran).toMatchObject({ kind: "ran", outcome: "interrupted" })
    // Closing but ended with an outcome of its own: settled too.
    const done = Completion.toChange(envOf(), finished(h, Task.succeeded))
    expect(done.ran).toMatchObject({ kind: "ran", outcome: "succeeded" })
  })

  it("settled as settle.ts decides, with what the commit needs to decide again", () => {
    const h = held()
    const { change, ran, continuation } = Completion.toChange(
      envOf(),
      finished(h, Task.failed("smtp down")),
    )
    const draws: Array<number> = []
    const again = {
      outcome: Task.failed("smtp down"),
      startedAt: 1_010,
      finishedAt: 1_500,
      runNumber: 5,
      seq: 40,
      windowMs: 60_000,
      owner: "p1",
      draws,
    }
    const decided = Settle.decide(
      h.row,
      again,
      Settle.recording({ next: () => 0.25 }, draws),
      undefined,
    )
    expect(change).toStrictEqual({
      id: "t",
      fence: 7,
      revision: 11,
      update: decided.update,
      run: decided.run,
      events: decided.events,
      again,
      fencedOut: change.fencedOut,
    })
    // The jitter drawn is kept for the commit to replay.
    expect(change.again?.draws).toEqual([0.25])
    expect(ran).toStrictEqual({ kind: "ran", ...decided.run })
    expect(continuation).toBe("retry")
    expect(change.fencedOut).toMatchObject({
      kind: "fenced-out",
      detail: "attempt 2, delivery 3, outcome failed",
      at: 1_500,
      owner: "p1",
    })
  })

  it("says when the lease was lost; a final run's continuation is final", () => {
    const last = held({ lost: true }, claimed({ plan: undefined, attempt: 1 }))
    const { change, continuation } = Completion.toChange(envOf(), finished(last, Task.succeeded))
    expect(change.fencedOut.detail).toBe("attempt 1, delivery 3, outcome succeeded (lease lost)")
    expect(continuation).toBe("final")
  })
})
