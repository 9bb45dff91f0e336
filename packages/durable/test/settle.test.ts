/**
 * A finished run's decision on its own (`src/internal/settle.ts`): the outcome rendered for the
 * ledger, the jitter draws recorded and replayed, and `decide` — the row update, the ledger row,
 * the events and the breaker's slot — for a scheduled slot's run and for a manual run's end.
 */
import { Results, Rules, Schedule, Task } from "@tickwork/core"
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import type { KeptRun, Redecision, TaskRow } from "../src/internal/model.ts"
import * as KeptResult from "../src/internal/result.ts"
import * as Rows from "../src/internal/rows.ts"
import * as Settle from "../src/internal/settle.ts"
import { running } from "./rowFixtures.ts"

/** Run 5 of the row, started at 1_010 and finished at `finishedAt`. */
const again = (outcome: Task.Outcome, finishedAt = 1_050): Redecision => ({
  outcome,
  startedAt: 1_010,
  finishedAt,
  runNumber: 5,
  seq: 40,
  windowMs: Number.POSITIVE_INFINITY,
  owner: "p1",
  draws: [],
})

const half = { next: () => 0.5 }

/** The run record of `running`'s succeeded run, ended at 1,050, its task next due at `nextRunAt`. */
const succeededRun = (nextRunAt: number) => ({
  taskId: "t",
  generation: 2,
  slot: 1_000,
  attempt: 1,
  runAt: 1_000,
  startedAt: 1_010,
  finishedAt: 1_050,
  outcome: "succeeded",
  error: null,
  fence: 7,
  owner: "p1",
  delivery: 3,
  state: "scheduled",
  nextRunAt,
  result: null,
  resultError: null,
})

describe("a run's outcome as the ledger keeps it (SPEC §6.3)", () => {
  it("a success is no error; each other outcome says what it was", () => {
    expect(Settle.renderOutcome(Task.succeeded)).toBeNull()
    expect(Settle.renderOutcome({ kind: "interrupted" })).toBe("interrupted")
    expect(Settle.renderOutcome({ kind: "timed-out", afterMs: 250 })).toBe("timed out after 250 ms")
    expect(Settle.renderOutcome({ kind: "defect", defect: "boom" })).toBe('defect: "boom"')
  })

  it("an error is its tag and message, either alone, or else its value shown", () => {
    const failed = (error: unknown) => Settle.renderOutcome(Task.failed(error))
    expect(failed({ _tag: "SmtpError", message: "down" })).toBe("SmtpError: down")
    expect(failed({ message: "down" })).toBe("down")
    expect(failed({ _tag: "SmtpError", message: "" })).toBe("SmtpError")
    expect(failed({ _tag: "SmtpError" })).toBe("SmtpError")
    expect(failed({ _tag: 7, message: "down" })).toBe("down")
    expect(failed({ _tag: 7, message: 8 })).toBe('{"_tag":7,"message":8}')
    expect(failed(null)).toBe("null")
    expect(failed("smtp down")).toBe('"smtp down"')
    expect(Settle.renderOutcome({ kind: "defect", defect: new Error("bad") })).toBe("defect: bad")
  })

  it("NUL and lone surrogates, which no store keeps, become U+FFFD; pairs stay", () => {
    const failed = (message: string) => Settle.renderOutcome(Task.failed({ message }))
    expect(failed("a\u0000b\u0000")).toBe("a\uFFFDb\uFFFD")
    expect(failed("x\uD800y\uDC00z")).toBe("x\uFFFDy\uFFFDz")
    expect(failed("end\uD83D")).toBe("end\uFFFD")
    expect(failed("\uDE00start")).toBe("\uFFFDstart")
    expect(failed("pair \uD83D\uDE00 ok")).toBe("pair \uD83D\uDE00 ok")
    expect(Settle.renderOutcome({ kind: "defect", defect: { message: "\u0000" } })).toBe(
      "defect: \uFFFD",
    )
  })
})

describe("jitter draws, recorded and replayed", () => {
  it("a recording source passes its draws through and keeps them in order", () => {
    const values = [0.1, 0.7]
    const draws: Array<number> = []
    const r = Settle.recording({ next: () => values.shift() as number }, draws)
    expect([r.next(), r.next()]).toEqual([0.1, 0.7])
    expect(draws).toEqual([0.1, 0.7])
  })

  it("a replaying source gives the draws, then its fallback, then the middle of the range", () => {
    const r = Settle.replaying([0.1, 0.7], { next: () => 0.9 })
    expect([r.next(), r.next(), r.next()]).toEqual([0.1, 0.7, 0.9])
    const bare = Settle.replaying([0.3], undefined)
    expect([bare.next(), bare.next()]).toEqual([0.3, 0.5])
  })
})

describe("a slot's run decided (load row → Rules.settle → row update)", () => {
  it("a success: the next slot, the ledger row of the run, a slot its breaker counts as ended", () => {
    const row = running()
    const got = Settle.decide(row, again(Task.succeeded), half, undefined)
    const s = Rules.settle(Rows.view(row, Number.POSITIVE_INFINITY, 5), Task.succeeded, 1_050, {
      random: half,
    })
    expect(got.update).toStrictEqual(Rows.settled(row, s, 5, 1_050, null, 40))
    expect(got.update).toMatchObject({ state: "scheduled", slot: 2_000, runAt: 2_000 })
    expect(got.continuation).toBe("next")
    expect(got.events).toEqual([])
    expect(got.slot).toStrictEqual({ ended: true, failed: false })
    expect(got.run).toStrictEqual(succeededRun(2_000))
  })

  it("a failure with retries left: a retry of the same slot, not an ended slot", () => {
    const got = Settle.decide(running(), again(Task.failed("smtp down")), half, undefined)
    expect(got.continuation).toBe("retry")
    expect(got.update).toMatchObject({ state: "scheduled", slot: 1_000, attempt: 2 })
    expect(got.update.lastError).toBe('"smtp down"')
    expect(got.slot).toStrictEqual({ ended: false, failed: true })
    expect(got.run).toMatchObject({ outcome: "failed", error: '"smtp down"', nextRunAt: 1_150 })
  })

  it("a failure that uses up the retries asks the breaker, whose answer holds the task", () => {
    const last = running({ attempt: 3 })
    let asked = 0
    const opens = () => {
      asked++
      return true
    }
    const got = Settle.decide(last, again(Task.failed("smtp down")), half, opens)
    expect(asked).toBe(1)
    expect(got.slot).toStrictEqual({ ended: true, failed: true })
    expect(got.update).toMatchObject({ state: "paused", pausedReason: "breaker" })
    const closed = Settle.decide(last, again(Task.failed("smtp down")), half, () => false)
    expect(closed.update).toMatchObject({ state: "scheduled", slot: 2_000, pausedReason: null })
  })

  it("slots dropped while it ran are recorded as missed, by the run's owner", () => {
    const got = Settle.decide(running(), again(Task.succeeded, 4_500), half, undefined)
    expect(got.update).toMatchObject({ slot: 5_000, runAt: 5_000 })
    expect(got.events).toHaveLength(1)
    expect(got.events[0]).toMatchObject({
      kind: "skipped",
      taskId: "t",
      generation: 2,
      owner: "p1",
      at: 4_500,
    })
  })

  it("a schedule change that waited for this slot is stored from the next slot on (SPEC §15)", () => {
    const restart = Schedule.fixedRate(500)
    const got = Settle.decide(running({ restart }), again(Task.succeeded), half, undefined)
    const s = Rules.settle(
      Rows.view(running({ restart }), Number.POSITIVE_INFINITY, 5),
      Task.succeeded,
      1_050,
      { random: half },
    )
    expect(s.consumed).toBe(true)
    const encoded = Schedule.encode(restart, { first: s.nextSlot as number, plan: s.plan })
    expect(Result.isSuccess(encoded)).toBe(true)
    expect(got.update.schedule).toStrictEqual(Result.getOrThrow(encoded))
    // Retried instead, the slot is not consumed: the change still waits.
    const retried = Settle.decide(running({ restart }), again(Task.failed("x")), half, undefined)
    expect(retried.update.schedule).toBeUndefined()
    expect(Settle.decide(running(), again(Task.succeeded), half, undefined).update.schedule).toBe(
      undefined,
    )
  })

  it("a kept result is written with the run; a refused one says why (SPEC §19.3)", () => {
    const value = new KeptResult.Encoded(Results.keep("t", '{"n":1}', 1_000))
    const kept = Settle.decide(running(), again({ kind: "succeeded", value }), half, undefined)
    expect(kept.run).toMatchObject({ result: '{"n":1}', resultError: null })
    const refused = new KeptResult.Encoded(Results.keep("t", '"a long text"', 4))
    const got = Settle.decide(
      running(),
      again({ kind: "succeeded", value: refused }),
      half,
      undefined,
    )
    const error = (Results.keep("t", '"a long text"', 4) as { error: Error & { _tag: string } })
      .error
    expect(got.run).toMatchObject({
      result: null,
      resultError: `${error._tag}: ${error.message}`,
    })
    // A value the worker did not encode (a handler with no result schema) is not kept.
    const plain = Settle.decide(
      running(),
      again({ kind: "succeeded", value: '{"n":1}' }),
      half,
      undefined,
    )
    expect(plain.run).toMatchObject({ result: null, resultError: null })
  })
})

describe("a manual run's end (SPEC §19.1)", () => {
  /** The run the trigger set aside: slot 3_000's second attempt. */
  const setAside: KeptRun = {
    slot: 3_000,
    dueAt: 3_100,
    attempt: 2,
    deliveries: 1,
    seq: 9,
    resumeFrom: 2_500,
  }
  const manual = (fields: Partial<TaskRow> = {}) =>
    running({ kept: setAside, slot: 1_000, runAt: 1_000, ...fields })

  it("puts the run set aside back, scheduled; no slot for the breaker, no events", () => {
    const got = Settle.decide(manual(), again(Task.succeeded), half, () => {
      throw new Error("a manual run's end does not ask the breaker")
    })
    expect(got.update).toStrictEqual({
      state: "scheduled",
      slot: 3_000,
      runAt: 3_100,
      claimableAt: 3_100,
      attempt: 2,
      runNumber: 5,
      consecutiveFailures: 0,
      deliveries: 1,
      leaseOwner: null,
      finishedAt: null,
      lastError: "before",
      seq: 9,
      updatedAt: 1_050,
      pausedReason: null,
      resumeFrom: 2_500,
      kept: null,
    })
    expect(got.continuation).toBe("next")
    expect(got.events).toEqual([])
    expect(got.slot).toBeUndefined()
    expect(got.run).toStrictEqual({ ...succeededRun(3_100), manual: true })
  })

  it("paused when a pause was asked for while it ran; a failure is its last error", () => {
    const got = Settle.decide(
      manual({ pausedReason: "manual", consecutiveFailures: 1 }),
      again(Task.failed("smtp down")),
      half,
      undefined,
    )
    expect(got.update).toMatchObject({
      state: "paused",
      pausedReason: "manual",
      lastError: '"smtp down"',
      consecutiveFailures: 1,
    })
    expect(got.run).toMatchObject({ state: "paused", outcome: "failed", error: '"smtp down"' })
  })

  it("keeps the manual run's result, or says why it refused it", () => {
    const value = new KeptResult.Encoded(Results.keep("t", "[1]", 1_000))
    const kept = Settle.decide(manual(), again({ kind: "succeeded", value }), half, undefined)
    expect(kept.run).toMatchObject({ result: "[1]", resultError: null })
    const refusedKept = Results.keep("t", '"a long text"', 4)
    const refused = Settle.decide(
      manual(),
      again({ kind: "succeeded", value: new KeptResult.Encoded(refusedKept) }),
      half,
      undefined,
    )
    const error = (refusedKept as { error: Error & { _tag: string } }).error
    expect(refused.run).toMatchObject({
      result: null,
      resultError: `${error._tag}: ${error.message}`,
    })
  })
})

describe("a run's outcome rendered, in full", () => {
  it("a function failed with is shown as one, whatever properties it has", () => {
    const fn = Object.assign(() => {}, { _tag: "Tagged", message: "hidden" })
    expect(Settle.renderOutcome(Task.failed(fn))).toBe("a function")
  })
})

describe("slots dropped, in full", () => {
  it("a run that started after later slots were due dropped them as late, not as overlap", () => {
    const late = { ...again(Task.succeeded, 3_600), startedAt: 3_500 }
    const got = Settle.decide(running(), late, half, undefined)
    expect(got.events[0]).toMatchObject({
      kind: "skipped",
      firstSlot: 2_000,
      lastSlot: 3_000,
      count: 2,
      cause: "late",
    })
    const overlap = Settle.decide(running(), again(Task.succeeded, 4_500), half, undefined)
    expect(overlap.events[0]).toMatchObject({ cause: "overlap" })
  })
})
