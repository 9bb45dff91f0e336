/**
 * A stored row read in the core's terms, and the row updates that store the core's decisions
 * (`src/internal/rows.ts`), on their own: what each update keeps of the row, and what it changes.
 */
import { Rules, Schedule } from "@tickwork/core"
import { describe, expect, it } from "vitest"
import type { TaskRow } from "../src/internal/model.ts"
import * as Rows from "../src/internal/rows.ts"

/** A recurring task's plan: the updates carry it, never read it. */
const plan = { every: 1_000 } as unknown as Schedule.Plan

/** A running row of a recurring task, its lease until 9_000; every field distinct. */
const base = (fields: Partial<TaskRow> = {}): TaskRow =>
  ({
    id: "t",
    generation: 2,
    plan,
    state: "running",
    slot: 1_000,
    runAt: 1_200,
    claimableAt: 9_000,
    attempt: 2,
    runNumber: 5,
    consecutiveFailures: 1,
    deliveries: 3,
    fence: 4,
    leaseOwner: "me",
    seq: 17,
    finishedAt: null,
    lastError: "before",
    pausedReason: null,
    resumeFrom: 700,
    windowMs: null,
    restart: undefined,
    retry: { maxRetries: 0 },
    missedRuns: "catch-up",
    pauseAfter: 0,
    ...fields,
  }) as unknown as TaskRow

/** What {@link base} keeps when written back at 5_000 with no lease. */
const kept = {
  state: "running",
  slot: 1_000,
  runAt: 1_200,
  claimableAt: 1_200,
  attempt: 2,
  runNumber: 5,
  consecutiveFailures: 1,
  deliveries: 3,
  leaseOwner: null,
  finishedAt: null,
  lastError: "before",
  seq: 17,
  updatedAt: 5_000,
  pausedReason: null,
  resumeFrom: 700,
}

describe("a row in the rules' terms", () => {
  it("is its fields, with a pause request only while it runs", () => {
    expect(Rows.view(base({ pausedReason: "manual" }), 60_000)).toStrictEqual({
      plan,
      slot: 1_000,
      dueAt: 1_200,
      attempt: 2,
      runNumber: 5,
      consecutiveFailures: 1,
      retry: { maxRetries: 0 },
      missedRuns: "catch-up",
      pauseAfter: 0,
      windowMs: 60_000,
      pauseRequest: "manual",
      restart: undefined,
      resumeFrom: 700,
    })
    expect(Rows.view(base({ pausedReason: null }), 60_000).pauseRequest).toBeUndefined()
    expect(
      Rows.view(base({ state: "paused", pausedReason: "manual" }), 60_000).pauseRequest,
    ).toBeUndefined()
    expect(Rows.view(base(), 60_000, 6).runNumber).toBe(6)
  })

  it("has its own window, else the layer's for a recurring task, else none", () => {
    expect(Rows.windowOf({ windowMs: 50, plan: undefined }, 60_000)).toBe(50)
    expect(Rows.windowOf({ windowMs: 0, plan }, 60_000)).toBe(0)
    expect(Rows.windowOf({ windowMs: null, plan }, 60_000)).toBe(60_000)
    expect(Rows.windowOf({ windowMs: null, plan }, Number.POSITIVE_INFINITY)).toBe(Rules.NO_WINDOW)
    expect(Rows.windowOf({ windowMs: null, plan: undefined }, 60_000)).toBe(Rules.NO_WINDOW)
  })

  it("has a lease deadline only while it runs", () => {
    expect(Rows.leaseUntil({ state: "running", claimableAt: 9_000 })).toBe(9_000)
    expect(Rows.leaseUntil({ state: "scheduled", claimableAt: 9_000 })).toBeUndefined()
  })
})

describe("a row's updates", () => {
  const settled = (fields: Partial<Rules.Settled>): Rules.Settled =>
    ({
      state: "scheduled",
      slot: 2_000,
      nextSlot: 2_000,
      attempt: 1,
      consecutiveFailures: 0,
      pausedReason: undefined,
      consumed: false,
      ...fields,
    }) as Rules.Settled

  it("after a run due again: at its next slot, in a new push, its lease let go", () => {
    expect(Rows.settled(base(), settled({}), 6, 3_000, "boom", 40)).toStrictEqual({
      state: "scheduled",
      slot: 2_000,
      runAt: 2_000,
      claimableAt: 2_000,
      attempt: 1,
      runNumber: 6,
      consecutiveFailures: 0,
      deliveries: 0,
      leaseOwner: null,
      finishedAt: null,
      lastError: "boom",
      seq: 40,
      updatedAt: 3_000,
      pausedReason: null,
      resumeFrom: 700,
    })
  })

  it("after a final run: finished, its push and last error kept, a resume's skip point used up", () => {
    const s = settled({
      state: "failed",
      nextSlot: undefined,
      pausedReason: "failures",
      consumed: true,
    })
    expect(Rows.settled(base(), s, 6, 3_000, null, 40)).toMatchObject({
      state: "failed",
      runAt: 1_200,
      claimableAt: 1_200,
      finishedAt: 3_000,
      lastError: "before",
      seq: 17,
      pausedReason: "failures",
      resumeFrom: -1,
    })
  })

  it("handed back: scheduled, or paused as requested; a run never started was not delivered (SPEC §5.5)", () => {
    expect(Rows.handBack(base(), 5_000, true)).toStrictEqual({ ...kept, state: "scheduled" })
    expect(Rows.handBack(base({ pausedReason: "manual" }), 5_000, false)).toStrictEqual({
      ...kept,
      state: "paused",
      pausedReason: "manual",
      deliveries: 2,
    })
    expect(Rows.handBack(base({ deliveries: 0 }), 5_000, false).deliveries).toBe(0)
  })

  it("unreadable: failed, saying why", () => {
    expect(
      Rows.unreadable(base({ pausedReason: "manual" }), 5_000, new Error("bad plan")),
    ).toStrictEqual({
      ...kept,
      state: "failed",
      finishedAt: 5_000,
      pausedReason: null,
      lastError: "the stored task cannot be completed: bad plan",
    })
    expect(Rows.unreadable(base(), 5_000, "odd").lastError).toBe(
      "the stored task cannot be completed: odd",
    )
  })

  it("moved at claim time: scheduled at its new slot, in a new push, not delivered", () => {
    expect(Rows.moved(base(), 3_000, 5_000, 41)).toStrictEqual({
      ...kept,
      state: "scheduled",
      slot: 3_000,
      runAt: 3_000,
      claimableAt: 3_000,
      deliveries: 0,
      seq: 41,
    })
  })

  it("paused: keeps its slot", () => {
    expect(Rows.paused(base({ state: "scheduled" }), "manual", 5_000)).toStrictEqual({
      ...kept,
      state: "paused",
      pausedReason: "manual",
    })
  })

  it("a pause requested of a running row: its run and lease go on", () => {
    expect(Rows.requested(base(), "manual", 5_000)).toStrictEqual({
      ...kept,
      leaseOwner: "me",
      claimableAt: 9_000,
      pausedReason: "manual",
    })
    expect(Rows.requested(base({ state: "scheduled" }), null, 5_000).claimableAt).toBe(9_000)
  })

  it("resumed: scheduled where the rules say, a new skip point only when they give one", () => {
    const r = (resumeFrom: number) =>
      ({
        slot: 4_000,
        dueAt: 4_100,
        consecutiveFailures: 0,
        resumeFrom,
        skipped: undefined,
      }) as unknown as Rules.Resume
    const paused = base({ state: "paused", pausedReason: "manual" })
    expect(Rows.resumed(paused, r(3_000), 5_000, 42)).toStrictEqual({
      ...kept,
      state: "scheduled",
      slot: 4_000,
      runAt: 4_100,
      claimableAt: 4_100,
      consecutiveFailures: 0,
      seq: 42,
      pausedReason: null,
      resumeFrom: 3_000,
    })
    expect(Rows.resumed(paused, r(0), 5_000, 42).resumeFrom).toBe(0)
    expect(Rows.resumed(paused, r(-1), 5_000, 42).resumeFrom).toBe(700)
  })

  it("resume with no manual run waiting: as Rules.resume decides, in a new push (SPEC §15)", () => {
    // A paused retry of a one-shot keeps its due time; the failures count starts again.
    const paused = base({
      state: "paused",
      pausedReason: "manual",
      plan: undefined,
      windowMs: null,
    })
    const r = Rules.resume(Rows.view(paused, 60_000), 5_000)
    expect([r.slot, r.dueAt, r.consecutiveFailures]).toEqual([1_000, 1_200, 0])
    const got = Rows.resume(paused, 60_000, 5_000, 42)
    expect(got).toStrictEqual({
      update: Rows.resumed(paused, r, 5_000, 42),
      skipped: r.skipped,
      slot: 1_000,
      nextSlot: 1_200,
    })
    expect(got.update).toMatchObject({
      state: "scheduled",
      runAt: 1_200,
      seq: 42,
      pausedReason: null,
    })
  })

  it("expired: failed, not delivered, saying its deadline", () => {
    expect(Rows.expired(base({ windowMs: 100, deliveries: 0 }), 5_000, 1_100)).toStrictEqual({
      ...kept,
      state: "failed",
      deliveries: 0,
      finishedAt: 5_000,
      pausedReason: null,
      lastError: "expired: not started by its deadline 1100 (slot 1000 + window 100 ms)",
    })
    expect(Rows.expired(base(), 5_000, 0).deliveries).toBe(2)
  })

  it("updated in place: moved by a new schedule or kept, its lease kept while it runs (SPEC §15)", () => {
    const define = { handler: "h" } as never
    expect(Rows.updated(base(), 5_000, {}, define)).toStrictEqual({
      ...kept,
      leaseOwner: "me",
      claimableAt: 9_000,
      finishedAt: null,
      define,
    })
    const scheduled = base({ state: "scheduled", finishedAt: 7 })
    expect(Rows.updated(scheduled, 5_000, { slot: 6_000, seq: 43 }, define)).toStrictEqual({
      ...kept,
      state: "scheduled",
      leaseOwner: "me",
      slot: 6_000,
      runAt: 6_000,
      claimableAt: 6_000,
      finishedAt: 7,
      resumeFrom: -1,
      seq: 43,
      define,
    })
    expect(Rows.updated(scheduled, 5_000, {}, define).claimableAt).toBe(1_200)
  })
})

describe("resume with a manual run waiting (SPEC §19.1)", () => {
  /** Slots every 1_000 ms from 0. */
  const grid = (Schedule.resolve(Schedule.fixedRate(1_000), 0) as Schedule.Resolved).plan
  /** The run a manual trigger set aside: a retry of slot 1_000, due at 1_200. */
  const setAside = { slot: 1_000, dueAt: 1_200, attempt: 2, deliveries: 1, seq: 9, resumeFrom: 700 }
  /** Held by its breaker with the manual run (slot 4_000) waiting. */
  const held = (fields: Partial<TaskRow> = {}) =>
    base({
      state: "paused",
      pausedReason: "breaker",
      plan: grid,
      slot: 4_000,
      runAt: 4_000,
      claimableAt: 4_000,
      attempt: 1,
      kept: setAside,
      ...fields,
    })

  it("moves the run set aside as Rules.resumeManual says; the manual run stays due as it was", () => {
    const row = held()
    const m = Rules.resumeManual(Rows.view(row, 60_000), setAside, 5_000)
    // A held retry keeps its due time; the grid slots 2_000..4_000 that passed are skipped.
    expect([m.resume.slot, m.resume.dueAt, m.resume.resumeFrom]).toEqual([1_000, 1_200, 5_000])
    expect(Rows.resume(row, 60_000, 5_000, 42)).toStrictEqual({
      update: {
        ...kept,
        state: "scheduled",
        slot: 4_000,
        runAt: 4_000,
        claimableAt: 4_000,
        attempt: 1,
        consecutiveFailures: 0,
        seq: 42,
        pausedReason: null,
        kept: { ...setAside, resumeFrom: 5_000 },
      },
      skipped: m.resume.skipped,
      slot: 4_000,
      nextSlot: 1_200,
    })
    expect(m.resume.skipped).toBeDefined()
  })

  it("keeps the set-aside run's skip point when the resume gives none", () => {
    // Not a retry, due after now: nothing skipped, no new skip point.
    const later = { ...setAside, slot: 6_000, dueAt: 6_000, attempt: 1 }
    const got = Rows.resume(held({ kept: later }), 60_000, 5_000, 42)
    expect(got.skipped).toBeUndefined()
    expect(got.nextSlot).toBe(6_000)
    expect(got.update.kept).toStrictEqual(later)
  })
})
