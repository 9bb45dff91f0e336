/**
 * The kernel's decisions as pure functions over one row: each with explicit `now`, as any store
 * (the kernel's table, the durable store's rows) calls them.
 */
import { describe, expect, it } from "vitest"
import { Errors, Kernel, Random, Retry, Rules, Schedule, Task } from "../src/index.ts"

const grid = (period: number, origin = 0) =>
  (Schedule.resolve(Schedule.fixedRate(period, { delay: origin }), 0) as Schedule.Resolved).plan

const row = (over: Partial<Rules.Row> = {}): Rules.Row => ({
  plan: undefined,
  slot: 0,
  dueAt: 0,
  attempt: 1,
  runNumber: 1,
  consecutiveFailures: 0,
  retry: Retry.none,
  missedRuns: "catch-up",
  pauseAfter: 0,
  windowMs: Rules.NO_WINDOW,
  ...over,
})

const random = Random.seeded(0)

describe("validate", () => {
  it("accepts a task with its first slot and resolved policies", () => {
    const a = Rules.validate(
      { schedule: Schedule.fixedRate(10, { delay: 5 }), priority: "high" },
      100,
    )
    expect(a).toMatchObject({ first: 105, rank: 0, missedRuns: "catch-up", windowMs: -1 })
  })

  it("an unknown key is InvalidOption naming it (SPEC §13)", () => {
    const e = Rules.validate({ schedule: Schedule.once(1), missedRun: "skip" } as never, 0)
    expect(e).toBeInstanceOf(Errors.InvalidOption)
    expect((e as Errors.InvalidOption).field).toBe("missedRun")
  })

  it("a window on a fixed-delay schedule is InvalidOption", () => {
    const e = Rules.validate({ schedule: Schedule.fixedDelay(10), window: 5 }, 0)
    expect((e as Errors.InvalidOption).field).toBe("window")
  })

  it("fills in the documented defaults and keeps what is given", () => {
    expect(Rules.validate({ schedule: Schedule.once(5) }, 100)).toEqual({
      priority: "normal",
      rank: 1,
      retry: Retry.none,
      missedRuns: "catch-up",
      pauseAfter: 0,
      tags: [],
      windowMs: Rules.NO_WINDOW,
      first: 105,
      plan: undefined,
    })
    const a = Rules.validate(
      {
        schedule: Schedule.cron("0 9 * * *"),
        priority: "low",
        missedRuns: "skip",
        pauseAfterConsecutiveFailures: 3,
        tags: ["b", "a", "b"],
        window: "1 minute",
      },
      0,
    )
    expect(a).toMatchObject({
      priority: "low",
      rank: 2,
      missedRuns: "skip",
      pauseAfter: 3,
      tags: ["b", "a"],
      windowMs: 60_000,
      first: 9 * 3_600_000,
    })
    expect((a as Rules.Accepted).plan?.kind).toBe("cron")
  })

  it("a one-shot's delay that is not a plain whole ms is resolved like any schedule", () => {
    expect(Rules.validate({ schedule: Schedule.once("2 seconds") }, 100)).toMatchObject({
      first: 2100,
    })
    expect(Rules.validate({ schedule: Schedule.once(0) }, 100)).toMatchObject({ first: 100 })
    for (const delay of [-1, 1.5, Number.NaN]) {
      const e = Rules.validate({ schedule: Schedule.once(delay) }, 100)
      expect(e).toBeInstanceOf(Errors.InvalidDelay)
    }
    // A slot past the end of time is refused, not wrapped or clamped.
    expect(Rules.validate({ schedule: Schedule.once(Number.MAX_SAFE_INTEGER) }, 1)).toBeInstanceOf(
      Errors.InvalidDelay,
    )
    expect(
      Rules.validate({ schedule: Schedule.once(Number.MAX_SAFE_INTEGER - 1) }, 1),
    ).toMatchObject({ first: Number.MAX_SAFE_INTEGER })
  })

  // SPEC §13: each bad option is a typed error naming the field and the value.
  it.each([
    ["options", null, "options"],
    ["priority", { priority: "urgent" }, "priority"],
    ["retry", { retry: { maxRetries: -1 } }, "retry.maxRetries"],
    ["missedRuns", { missedRuns: "later" }, "missedRuns"],
    [
      "a negative pause count",
      { pauseAfterConsecutiveFailures: -1 },
      "pauseAfterConsecutiveFailures",
    ],
    [
      "a fractional pause count",
      { pauseAfterConsecutiveFailures: 1.5 },
      "pauseAfterConsecutiveFailures",
    ],
    ["tags that are no array", { tags: "a" }, "tags"],
    ["33 tags", { tags: Array.from({ length: 33 }, (_, k) => `t${k}`) }, "tags"],
    ["an empty tag", { tags: ["a", ""] }, "tags[1]"],
    ["a 65-character tag", { tags: ["x".repeat(65)] }, "tags[0]"],
    ["a tag that is no string", { tags: [7] }, "tags[0]"],
    ["window", { window: -5 }, "window"],
    ["a window on a custom schedule", { schedule: Schedule.custom(() => 1), window: 5 }, "window"],
    ["schedule", { schedule: Schedule.fixedRate(0) }, "period"],
  ])("validate: %s is refused, naming %s", (_what, options, field) => {
    const given = options === null ? null : { schedule: Schedule.once(1), ...(options as object) }
    const e = Rules.validate(given as never, 0) as Errors.InvalidOption
    expect(e).toBeInstanceOf(Error)
    expect(e.field).toBe(field)
    expect(e.message).toContain(field === "options" ? "object" : field.replace(/\[\d+\]$/, ""))
  })

  it("validate: a fixed-delay task without a window, or options that are no object, or no schedule", () => {
    expect(Rules.validate({ schedule: Schedule.fixedDelay(10) }, 5)).toMatchObject({
      first: 5,
      windowMs: Rules.NO_WINDOW,
    })
    expect((Rules.validate("daily" as never, 0) as Errors.InvalidOption).field).toBe("options")
    expect((Rules.validate({} as never, 0) as Errors.InvalidOption).field).toBe("schedule")
  })

  it("validate: tags at the limits are accepted", () => {
    const tags = Array.from({ length: 32 }, (_, k) => `${k}`.padEnd(64, "x"))
    expect(Rules.validate({ schedule: Schedule.once(1), tags }, 0)).toMatchObject({ tags })
    expect(Rules.validate({ schedule: Schedule.once(1), tags: [] }, 0)).toMatchObject({ tags: [] })
  })
})

describe("validateChanges", () => {
  const current = { plan: grid(10), windowMs: Rules.NO_WINDOW }

  it("each field given is resolved; the others stay undefined (no change)", () => {
    expect(Rules.validateChanges({}, 0, current)).toEqual({
      rank: undefined,
      retry: undefined,
      missedRuns: undefined,
      pauseAfter: undefined,
      tags: undefined,
      windowMs: undefined,
      resolved: undefined,
    })
    const v = Rules.validateChanges(
      {
        priority: "high",
        retry: { maxRetries: 2 },
        missedRuns: "coalesce",
        pauseAfterConsecutiveFailures: 4,
        tags: ["x", "x"],
        window: 30,
        schedule: Schedule.fixedRate(5, { delay: 1 }),
      },
      100,
      current,
    ) as Rules.ValidChanges
    expect(v).toMatchObject({
      rank: 0,
      retry: { maxRetries: 2 },
      missedRuns: "coalesce",
      pauseAfter: 4,
      tags: ["x"],
      windowMs: 30,
      resolved: { first: 101 },
    })
  })

  it("window: null removes the window; a fixed-delay task cannot get one", () => {
    expect(
      Rules.validateChanges({ window: null }, 0, { plan: grid(10), windowMs: 50 }),
    ).toMatchObject({ windowMs: Rules.NO_WINDOW })
    const delay = (Schedule.resolve(Schedule.fixedDelay(10), 0) as Schedule.Resolved).plan
    expect(
      (
        Rules.validateChanges({ window: 5 }, 0, {
          plan: delay,
          windowMs: Rules.NO_WINDOW,
        }) as Errors.InvalidOption
      ).field,
    ).toBe("window")
    // A kept window does not fit a new fixed-delay schedule; removing it with the change does.
    const kept = Rules.validateChanges({ schedule: Schedule.fixedDelay(10) }, 0, {
      plan: grid(10),
      windowMs: 50,
    }) as Errors.InvalidOption
    expect(kept.field).toBe("window")
    // The error names the value: the kept window's ms, or the window as it was given.
    expect(kept.value).toBe(50)
    const given = Rules.validateChanges({ window: "1 second" }, 0, {
      plan: (Schedule.resolve(Schedule.fixedDelay(10), 0) as Schedule.Resolved).plan,
      windowMs: Rules.NO_WINDOW,
    }) as Errors.InvalidOption
    expect(given.value).toBe("1 second")
    expect(
      Rules.validateChanges({ schedule: Schedule.fixedDelay(10), window: null }, 0, {
        plan: grid(10),
        windowMs: 50,
      }),
    ).toMatchObject({ windowMs: Rules.NO_WINDOW, resolved: { first: 0 } })
  })

  it.each([
    ["priority", { priority: "urgent" }, "priority"],
    ["retry", { retry: { factor: 0.5 } }, "retry.factor"],
    ["missedRuns", { missedRuns: "later" }, "missedRuns"],
    ["pause count", { pauseAfterConsecutiveFailures: -2 }, "pauseAfterConsecutiveFailures"],
    ["tags", { tags: [""] }, "tags[0]"],
    ["window", { window: 1.5 }, "window"],
    ["schedule", { schedule: Schedule.fixedRate(-1) }, "period"],
  ])("a bad %s change is refused, naming %s", (_what, changes, field) => {
    const e = Rules.validateChanges(changes as never, 0, current) as Errors.InvalidOption
    expect(e).toBeInstanceOf(Error)
    expect(e.field).toBe(field)
  })
})

describe("take", () => {
  it("SPEC §3: a late coalescing slot moves to the latest passed slot, merging the rest", () => {
    expect(Rules.take(row({ plan: grid(10), missedRuns: "coalesce" }), 35)).toEqual({
      _tag: "Coalesce",
      slot: 30,
      merged: { first: 0, last: 20, count: 3, exact: true },
    })
  })

  it("never coalesces past `limit`", () => {
    expect(Rules.take(row({ plan: grid(10), missedRuns: "coalesce" }), 35, 15)).toMatchObject({
      slot: 10,
    })
  })

  it("SPEC §3: slots more than the window late are skipped to the first slot inside it", () => {
    expect(Rules.take(row({ plan: grid(10), windowMs: 15 }), 42)).toEqual({
      _tag: "Skip",
      slot: 30,
      skipped: { first: 0, last: 20, count: 3, exact: true },
    })
  })

  it("a one-shot past its deadline expires", () => {
    expect(Rules.take(row({ slot: 10, dueAt: 10, windowMs: 5 }), 16)).toEqual({
      _tag: "Expire",
      deadline: 15,
    })
  })

  it("a run on time starts", () => {
    expect(Rules.take(row({ plan: grid(10), missedRuns: "coalesce" }), 0)._tag).toBe("Start")
  })

  it("SPEC §3: the window's edges: a run exactly at its deadline or window still starts", () => {
    expect(Rules.take(row({ slot: 10, dueAt: 10, windowMs: 5 }), 15)._tag).toBe("Start")
    expect(Rules.take(row({ plan: grid(10), windowMs: 15 }), 15)._tag).toBe("Start")
    expect(Rules.take(row({ plan: grid(10), windowMs: 15 }), 16)).toEqual({
      _tag: "Skip",
      slot: 10,
      skipped: { first: 0, last: 0, count: 1, exact: true },
    })
    // `notBefore` (the run's earliest start) counts as the start: it can make a run late.
    expect(Rules.take(row({ slot: 10, dueAt: 10, windowMs: 5 }), 12, 12, 16)).toEqual({
      _tag: "Expire",
      deadline: 15,
    })
    expect(Rules.take(row({ plan: grid(10), windowMs: 15 }), 0, 0, 16)._tag).toBe("Skip")
  })

  it("SPEC §3, §7: a retry is never skipped by the window nor coalesced: it belongs to its slot", () => {
    const retrying = { plan: grid(10), slot: 0, dueAt: 3, attempt: 2 }
    expect(Rules.take(row({ ...retrying, windowMs: 5 }), 100)._tag).toBe("Start")
    expect(Rules.take(row({ ...retrying, missedRuns: "coalesce" }), 100)._tag).toBe("Start")
    // A fixed-delay task is no grid: nothing to coalesce.
    const delay = (Schedule.resolve(Schedule.fixedDelay(10), 0) as Schedule.Resolved).plan
    expect(Rules.take(row({ plan: delay, missedRuns: "coalesce" }), 100)._tag).toBe("Start")
  })

  it("SPEC §3: a coalescing slot that is only late, with no later slot passed, starts as it is", () => {
    expect(Rules.take(row({ plan: grid(10), missedRuns: "coalesce" }), 9)._tag).toBe("Start")
    expect(Rules.take(row({ plan: grid(10), missedRuns: "coalesce" }), 10)).toEqual({
      _tag: "Coalesce",
      slot: 10,
      merged: { first: 0, last: 0, count: 1, exact: true },
    })
  })

  it("SPEC §3: a skip keeps a slot exactly at the window's start; the default notBefore is none", () => {
    // Taken at 45 with a 15 ms window: 30 is inside it (45 - 30 = 15), 0..20 are skipped.
    expect(Rules.take(row({ plan: grid(10), windowMs: 15 }), 45)).toEqual({
      _tag: "Skip",
      slot: 30,
      skipped: { first: 0, last: 20, count: 3, exact: true },
    })
    // A zero window at slot 0, taken at 0: on time, whatever the defaults.
    expect(Rules.take(row({ windowMs: 0 }), 0)._tag).toBe("Start")
    expect(Rules.takePlan(row({ windowMs: 0 }), 0)._tag).toBe("Start")
  })

  it("SPEC §3: a cron task coalesces like any grid", () => {
    const cron = (Schedule.resolve(Schedule.cron("*/10 * * * *"), 0) as Schedule.Resolved).plan
    const min = 60_000
    expect(Rules.take(row({ plan: cron, missedRuns: "coalesce" }), 25 * min)).toEqual({
      _tag: "Coalesce",
      slot: 20 * min,
      merged: { first: 0, last: 10 * min, count: 2, exact: true },
    })
  })

  it("mergeDropped: two merged ranges as one, exact only when both are", () => {
    const a = { first: 0, last: 20, count: 3, exact: true }
    const b = { first: 30, last: 40, count: 2, exact: false }
    expect(Rules.mergeDropped(undefined, b)).toBe(b)
    expect(Rules.mergeDropped(a, b)).toEqual({ first: 0, last: 40, count: 5, exact: false })
    expect(Rules.mergeDropped(a, { ...b, exact: true }).exact).toBe(true)
  })

  it("SPEC §3: takePlan folds a window skip then a coalesce into one move, each step with its cause", () => {
    // Due at 0, taken at 100 with a 15 ms window: 0–80 are skipped to 90, then 90 is coalesced
    // into 100, where the run starts; the coalesce after the skip is what the run merges.
    expect(
      Rules.takePlan(row({ plan: grid(10), windowMs: 15, missedRuns: "coalesce" }), 100),
    ).toEqual({
      _tag: "Move",
      slot: 100,
      steps: [
        { _tag: "Skip", from: 0, slot: 90, skipped: { first: 0, last: 80, count: 9, exact: true } },
        {
          _tag: "Coalesce",
          from: 90,
          slot: 100,
          merged: { first: 90, last: 90, count: 1, exact: true },
        },
      ],
      merged: { first: 90, last: 90, count: 1, exact: true },
      skipped: true,
    })
  })

  it("takePlan: a run on time starts, a one-shot past its deadline expires, nothing moves past limit", () => {
    expect(Rules.takePlan(row({ plan: grid(10), missedRuns: "coalesce" }), 0)).toEqual({
      _tag: "Start",
    })
    expect(Rules.takePlan(row({ slot: 10, dueAt: 10, windowMs: 5 }), 16)).toEqual({
      _tag: "Expire",
      deadline: 15,
    })
    const plan = Rules.takePlan(row({ plan: grid(10), missedRuns: "coalesce" }), 35, 15)
    expect(plan).toMatchObject({ _tag: "Move", slot: 10, skipped: false })
  })

  it("takePlan is take applied at each slot the row moves to, until it starts or passes limit", () => {
    for (const windowMs of [Rules.NO_WINDOW, 5, 15, 40])
      for (const missedRuns of ["catch-up", "coalesce", "skip"] as const)
        for (const now of [0, 9, 10, 25, 100, 1_000]) {
          let view = row({ plan: grid(10), windowMs, missedRuns })
          const steps: Array<Rules.TakeStep> = []
          for (let t = Rules.take(view, now); t._tag === "Skip" || t._tag === "Coalesce"; ) {
            steps.push({ ...t, from: view.dueAt })
            view = { ...view, slot: t.slot, dueAt: t.slot }
            if (t.slot > now) break
            t = Rules.take(view, now)
          }
          const plan = Rules.takePlan(row({ plan: grid(10), windowMs, missedRuns }), now)
          expect(plan._tag === "Move" ? [plan.slot, plan.steps] : [0, []]).toEqual(
            steps.length === 0 ? [0, []] : [view.slot, steps],
          )
        }
  })
})

describe("settle", () => {
  it("START numbers the run", () => {
    expect(Rules.start({ attempt: 1, runNumber: 4 }).runNumber).toBe(5)
  })

  it("SPEC §7: a failure with a retry left is due at failedAt + backoff, same slot", () => {
    const retry = Retry.resolve({ maxRetries: 1, base: 5 }) as Retry.Resolved
    const s = Rules.settle(row({ plan: grid(10), retry }), Task.failed("x"), 3, { random })
    expect(s).toMatchObject({ state: "scheduled", continuation: "retry", nextSlot: 8, slot: 0 })
    expect(s.attempt).toBe(2)
  })

  it("SPEC §7: the failure policy pauses a recurring task, holding its next slot", () => {
    const s = Rules.settle(
      row({ plan: grid(10), pauseAfter: 2, consecutiveFailures: 1 }),
      Task.failed("x"),
      1,
      { random },
    )
    expect(s).toMatchObject({
      state: "paused",
      pausedReason: "failures",
      nextSlot: 10,
      consecutiveFailures: 2,
    })
  })

  it("SPEC §5: a pause requested while running holds the next slot", () => {
    const s = Rules.settle(row({ plan: grid(10), pauseRequest: "manual" }), Task.succeeded, 1, {
      random,
    })
    expect(s).toMatchObject({ state: "paused", pausedReason: "manual", nextSlot: 10 })
  })

  it("SPEC §5: a recurring task's success continues on its grid, dropping what its policy drops", () => {
    const s = Rules.settle(row({ plan: grid(10), missedRuns: "skip" }), Task.succeeded, 35, {
      random,
    })
    expect(s).toMatchObject({
      state: "scheduled",
      continuation: "next",
      nextSlot: 40,
      slot: 40,
      dropped: { first: 10, last: 30, count: 3 },
      slotEnded: true,
      consumed: true,
      scheduleError: undefined,
    })
  })

  it("SPEC §7: a failure with retries left neither ends the slot nor computes the next slot", () => {
    const retry = Retry.resolve({ maxRetries: 2, base: 5 }) as Retry.Resolved
    const s = Rules.settle(row({ plan: grid(10), retry }), Task.failed("x"), 3, { random })
    expect(s).toMatchObject({ slotEnded: false, consumed: false, dropped: undefined })
    // The last retry's failure ends the slot; the recurring task goes on at its next slot.
    const last = Rules.settle(row({ plan: grid(10), retry, attempt: 3 }), Task.failed("x"), 4, {
      random,
    })
    expect(last).toMatchObject({
      state: "scheduled",
      continuation: "next",
      nextSlot: 10,
      attempt: 1,
      slotEnded: true,
      consecutiveFailures: 1,
    })
  })

  it("SPEC §7: a retry's due time is capped at the end of time", () => {
    const retry = Retry.resolve({ maxRetries: 1, base: 1000 }) as Retry.Resolved
    const s = Rules.settle(row({ retry }), Task.failed("x"), Number.MAX_SAFE_INTEGER - 10, {
      random,
    })
    expect(s.nextSlot).toBe(Number.MAX_SAFE_INTEGER)
  })

  it("SPEC §7: the breaker is asked only when the slot failed; its opening holds the task", () => {
    let asked = 0
    const opens = () => {
      asked++
      return true
    }
    const ok = Rules.settle(row({ plan: grid(10) }), Task.succeeded, 1, {
      random,
      breakerOpens: opens,
    })
    expect(ok.state).toBe("scheduled")
    expect(asked).toBe(0)
    const s = Rules.settle(row({ plan: grid(10) }), Task.failed("x"), 1, {
      random,
      breakerOpens: opens,
    })
    expect(s).toMatchObject({ state: "paused", pausedReason: "breaker", nextSlot: 10 })
    expect(asked).toBe(1)
    // The failure policy stops it first: its reason, not the breaker's.
    const f = Rules.settle(row({ plan: grid(10), pauseAfter: 1 }), Task.failed("x"), 1, {
      random,
      breakerOpens: opens,
    })
    expect(f.pausedReason).toBe("failures")
    // A closed breaker that does not open leaves it scheduled.
    const closed = Rules.settle(row({ plan: grid(10) }), Task.failed("x"), 1, {
      random,
      breakerOpens: () => false,
    })
    expect(closed).toMatchObject({ state: "scheduled", pausedReason: undefined })
  })

  it("SPEC §15: a schedule change that waited starts when the slot ends, as if scheduled then", () => {
    const s = Rules.settle(
      row({ plan: grid(10), restart: Schedule.fixedRate(100, { delay: 7 }) }),
      Task.succeeded,
      12,
      { random },
    )
    expect(s).toMatchObject({ state: "scheduled", nextSlot: 19, slot: 19, consumed: true })
    expect(s.plan).toMatchObject({ kind: "fixed-rate", period: 100 })
    // A one-shot given a new recurring schedule goes on too.
    expect(
      Rules.settle(row({ restart: Schedule.fixedDelay(5) }), Task.succeeded, 3, { random }),
    ).toMatchObject({ state: "scheduled", nextSlot: 3 })
    // A bad waiting schedule ends the task with its error.
    const bad = Rules.settle(
      row({ plan: grid(10), restart: Schedule.custom(() => Number.NaN) }),
      Task.succeeded,
      3,
      { random },
    )
    expect(bad.scheduleError).toBeInstanceOf(Errors.InvalidTime)
    expect(bad.nextSlot).toBeUndefined()
  })

  it("a custom schedule's next() that throws after a run is the settle's schedule error", () => {
    const plan = (
      Schedule.resolve(
        Schedule.custom((s) => {
          if (s !== undefined) throw new Error("no")
          return 5
        }),
        0,
      ) as Schedule.Resolved
    ).plan
    const s = Rules.settle(row({ plan, slot: 5, dueAt: 5 }), Task.succeeded, 6, { random })
    expect(s.scheduleError).toBeInstanceOf(Errors.InvalidTime)
    expect(s.nextSlot).toBeUndefined()
  })

  it("SPEC §15: after a held retry resumed past grid slots, the grid goes on from the resume", () => {
    // Slot 10's retry resumed at 45 (slots 20..40 recorded as skipped): next is 50, not 20.
    const held = row({ plan: grid(10), slot: 10, dueAt: 17, attempt: 2, resumeFrom: 45 })
    expect(Rules.settle(held, Task.succeeded, 46, { random })).toMatchObject({
      nextSlot: 50,
      dropped: undefined,
    })
    // Resumed exactly at a grid slot: that slot is still to run.
    expect(Rules.settle({ ...held, resumeFrom: 40 }, Task.succeeded, 40, { random })).toMatchObject(
      { nextSlot: 40 },
    )
    // No resume recorded: the grid goes on after the retry's own slot (catch-up runs 20).
    expect(Rules.settle({ ...held, resumeFrom: -1 }, Task.succeeded, 46, { random })).toMatchObject(
      { nextSlot: 20 },
    )
  })

  it("SPEC §15: a resume recorded before the retry's own slot, or on a fixed-delay task, moves nothing", () => {
    const held = row({ plan: grid(10), slot: 10, dueAt: 17, attempt: 2, resumeFrom: 5 })
    expect(Rules.settle(held, Task.succeeded, 18, { random })).toMatchObject({ nextSlot: 20 })
    const delay = (Schedule.resolve(Schedule.fixedDelay(10), 0) as Schedule.Resolved).plan
    expect(
      Rules.settle(row({ plan: delay, slot: 10, resumeFrom: 45 }), Task.succeeded, 50, { random }),
    ).toMatchObject({ nextSlot: 60 })
    const cron = (Schedule.resolve(Schedule.cron("*/10 * * * *"), 0) as Schedule.Resolved).plan
    const min = 60_000
    // A cron retry of slot 10 min resumed at 45 min: the next slot is 50 min.
    expect(
      Rules.settle(
        row({ plan: cron, slot: 10 * min, dueAt: 12 * min, attempt: 2, resumeFrom: 45 * min }),
        Task.succeeded,
        46 * min,
        { random },
      ),
    ).toMatchObject({ nextSlot: 50 * min })
  })

  it("SPEC §3: a custom schedule that says no more ends the task done", () => {
    const plan = (
      Schedule.resolve(
        Schedule.custom((s) => (s === undefined ? 5 : undefined)),
        0,
      ) as Schedule.Resolved
    ).plan
    expect(
      Rules.settle(row({ plan, slot: 5, dueAt: 5 }), Task.succeeded, 6, { random }),
    ).toMatchObject({
      state: "done",
      continuation: "final",
      nextSlot: undefined,
      scheduleError: undefined,
    })
  })

  it("an empty record buffer has every field of a record", () => {
    const run = {
      id: "a" as Task.TaskId,
      generation: 1,
      slot: 0,
      scheduledFor: 0,
      startedAt: 0,
      attempt: 1,
      runNumber: 1,
      tags: [],
    }
    const settled = {
      state: "done" as const,
      continuation: "final" as const,
      nextSlot: undefined,
      dropped: undefined,
      pausedReason: undefined,
    }
    expect(Object.keys(Rules.makeRecordBuffer()).sort()).toEqual(
      Object.keys(Rules.record(run, Task.succeeded, 1, settled)).sort(),
    )
  })

  it("a one-off's success ends it done; the record says so", () => {
    const s = Rules.settle(row(), Task.succeeded, 2, { random })
    expect(s).toMatchObject({ state: "done", continuation: "final", nextSlot: undefined })
    const run = {
      id: "a" as Task.TaskId,
      generation: 1,
      slot: 0,
      scheduledFor: 0,
      startedAt: 0,
      attempt: 1,
      runNumber: 1,
      tags: [],
    }
    expect(Rules.record(run, Task.succeeded, 2, s)).toMatchObject({
      kind: "ran",
      state: "done",
      finishedAt: 2,
    })
  })
})

describe("records", () => {
  const run = {
    id: "a" as Task.TaskId,
    generation: 2,
    slot: 10,
    scheduledFor: 10,
    startedAt: 11,
    attempt: 2,
    runNumber: 3,
    tags: [],
    merged: { first: 0, last: 0, count: 1, exact: true },
  }
  const settled = {
    state: "scheduled" as const,
    continuation: "retry" as const,
    nextSlot: 20,
    dropped: undefined,
    pausedReason: undefined,
  }
  const expected = {
    kind: "retried",
    id: "a",
    generation: 2,
    slot: 10,
    scheduledFor: 10,
    startedAt: 11,
    attempt: 2,
    runNumber: 3,
    finishedAt: 15,
    outcome: Task.failed("x"),
    state: "scheduled",
    continuation: "retry",
    nextSlot: 20,
    dropped: undefined,
    merged: run.merged,
  }

  it("SPEC §6: a run's record: kind retried for a retry, ran otherwise; every field from the run and its settle", () => {
    expect(Rules.record(run, Task.failed("x"), 15, settled)).toStrictEqual(expected)
    expect(Rules.record(run, Task.succeeded, 15, { ...settled, continuation: "next" }).kind).toBe(
      "ran",
    )
    // A record written into a buffer is the same record.
    const into = Rules.makeRecordBuffer()
    expect(Rules.recordInto(into, run, Task.failed("x"), 15, settled)).toStrictEqual(expected)
    expect(
      Rules.recordInto(into, run, Task.succeeded, 15, { ...settled, continuation: "final" }).kind,
    ).toBe("ran")
  })

  it("SPEC §19.1, §7: a manual run and a pausing run say so; copyRecord keeps both", () => {
    const r = Rules.record({ ...run, manual: true }, Task.failed("x"), 15, {
      ...settled,
      state: "paused",
      pausedReason: "breaker",
    })
    expect(r).toMatchObject({ manual: true, pausedReason: "breaker", state: "paused" })
    expect(Rules.copyRecord(r)).toStrictEqual(r)
    expect(Rules.copyRecord(r)).not.toBe(r)
    const plain = Rules.record(run, Task.succeeded, 15, settled)
    expect("manual" in plain || "pausedReason" in plain).toBe(false)
  })

  it("a run whose task was cancelled while it ran changes nothing: final, no next slot", () => {
    expect(Rules.finalRecord(run, Task.succeeded, 15, "cancelled")).toMatchObject({
      kind: "ran",
      state: "cancelled",
      continuation: "final",
      nextSlot: undefined,
      dropped: undefined,
    })
  })
})

describe("manual runs (SPEC §19)", () => {
  it("a retry by hand runs the attempt after the last that ran; a one-shot's deadline is dropped", () => {
    expect(Rules.retried(2, 1, false, 5_000)).toEqual({ attempt: 3, windowMs: Rules.NO_WINDOW })
    // An expired one-shot never ran its pending attempt: that attempt runs.
    expect(Rules.retried(0, 1, false, 5_000)).toEqual({ attempt: 1, windowMs: Rules.NO_WINDOW })
    expect(Rules.retried(1, 3, true, 5_000)).toEqual({ attempt: 3, windowMs: 5_000 })
  })

  it("a refusal names the action, the id and the state, and says what to do instead", () => {
    const t = Rules.manualRefusal("trigger", "report", "running") as Errors.ManualRunRefused
    expect(t).toMatchObject({ action: "trigger", id: "report", state: "running" })
    expect(t.message).toBe(
      'cannot trigger "report": it is running; a task never runs twice at once (SPEC §6.6): trigger it again when the run has finished',
    )
    expect(Rules.manualRefusal("trigger", "r", "scheduled", true)?.message).toBe(
      'cannot trigger "r": it is scheduled; a manual run of it is already waiting to start',
    )
    expect(Rules.manualRefusal("trigger", "r", "failed")?.message).toContain("retry it instead")
    expect(Rules.manualRefusal("retry", "r", "done")).toMatchObject({
      action: "retry",
      state: "done",
    })
    expect(Rules.manualRefusal("retry", "r", "paused")?.message).toBe(
      'cannot retry "r": it is paused; only a failed task can be retried: resume it instead',
    )
    expect(Rules.manualRefusal("retry", "r", "unknown")?.message).toContain("no task has this id")
    // A state no table names (a store's own) gets no advice rather than a wrong one.
    expect(Rules.manualRefusal("trigger", "r", "archived")?.message).toBe(
      'cannot trigger "r": it is archived; ',
    )
    expect(Rules.manualRefusal("retry", "r", "archived")?.message).toBe(
      'cannot retry "r": it is archived; ',
    )
  })
})

describe("pause and resume", () => {
  it("SPEC §15: PAUSE pauses a scheduled task, is requested while running, ignored otherwise", () => {
    expect(Rules.pause("scheduled")).toBe("paused")
    expect(Rules.pause("running")).toBe("requested")
    expect(Rules.pause("running", true)).toBe("ignored")
    expect(Rules.pause("done")).toBe("ignored")
  })

  it("SPEC §7, §15: a pause by hand outranks a breaker's or the failure policy's pause", () => {
    const task = (
      state: "scheduled" | "running" | "paused" | "done",
      pausedReason?: "manual" | "breaker" | "failures",
      pauseRequest?: "manual" | "breaker" | "failures",
    ) => ({ state, pausedReason, pauseRequest })
    expect(Rules.pauseStep(task("scheduled"), "breaker")).toBe("Paused")
    expect(Rules.pauseStep(task("running"), "manual")).toBe("Requested")
    expect(Rules.pauseStep(task("paused", "breaker"), "manual")).toBe("Outranked")
    expect(Rules.pauseStep(task("running", undefined, "breaker"), "manual")).toBe("Outranked")
    expect(Rules.pauseStep(task("paused", "failures"), "manual")).toBe("Outranked")
    expect(Rules.pauseStep(task("paused", "manual"), "manual")).toBe("Ignored")
    expect(Rules.pauseStep(task("paused", "manual"), "breaker")).toBe("Ignored")
    expect(Rules.pauseStep(task("running", undefined, "manual"), "breaker")).toBe("Ignored")
    expect(Rules.pauseStep(task("paused", "breaker"), "breaker")).toBe("Ignored")
    expect(Rules.pauseStep(task("done"), "manual")).toBe("Ignored")
  })

  it("SPEC §15: a final task is never outranked, whatever stale pause request its row keeps", () => {
    expect(
      Rules.pauseStep(
        { state: "done", pausedReason: undefined, pauseRequest: "breaker" },
        "manual",
      ),
    ).toBe("Ignored")
  })

  it("SPEC §15: a store's null pause request is none: a running task's pause is requested", () => {
    expect(
      Rules.pauseStep({ state: "running", pausedReason: null, pauseRequest: null }, "manual"),
    ).toBe("Requested")
  })

  it("SPEC §15: a grid resumes at the first slot >= now, the passed ones skipped", () => {
    const r = Rules.resume(row({ plan: grid(10), consecutiveFailures: 3 }), 25)
    expect(r).toEqual({
      dueAt: 30,
      slot: 30,
      skipped: { first: 0, last: 20, count: 3, exact: true },
      retry: false,
      consecutiveFailures: 0,
      resumeFrom: -1,
    })
  })

  it("SPEC §15: a grid paused before its slot keeps it; a one-shot keeps its slot however late", () => {
    const kept = { skipped: undefined, retry: false, consecutiveFailures: 0, resumeFrom: -1 }
    expect(Rules.resume(row({ plan: grid(10), slot: 30, dueAt: 30 }), 30)).toEqual({
      ...kept,
      dueAt: 30,
      slot: 30,
    })
    expect(Rules.resume(row({ slot: 5, dueAt: 5 }), 500)).toEqual({ ...kept, dueAt: 5, slot: 5 })
  })

  it("SPEC §15: a cron task resumes like any grid: at its first match >= now, the passed ones skipped", () => {
    const cron = (Schedule.resolve(Schedule.cron("*/10 * * * *"), 0) as Schedule.Resolved).plan
    const min = 60_000
    expect(Rules.resume(row({ plan: cron, slot: 10 * min, dueAt: 10 * min }), 35 * min)).toEqual({
      dueAt: 40 * min,
      slot: 40 * min,
      skipped: { first: 10 * min, last: 30 * min, count: 3, exact: true },
      retry: false,
      consecutiveFailures: 0,
      resumeFrom: -1,
    })
  })

  it("SPEC §15: a grid resumed exactly at one of its slots runs that slot, the earlier ones skipped", () => {
    expect(Rules.resume(row({ plan: grid(10) }), 30)).toMatchObject({
      dueAt: 30,
      slot: 30,
      skipped: { first: 0, last: 20, count: 3 },
    })
  })

  it("SPEC §15: fixed delay and custom resume at max(held slot, now), skipping nothing", () => {
    const delay = (Schedule.resolve(Schedule.fixedDelay(10), 0) as Schedule.Resolved).plan
    const kept = { skipped: undefined, retry: false, consecutiveFailures: 0, resumeFrom: -1 }
    expect(Rules.resume(row({ plan: delay, slot: 40, dueAt: 40 }), 25)).toEqual({
      ...kept,
      dueAt: 40,
      slot: 40,
    })
    expect(Rules.resume(row({ plan: delay, slot: 40, dueAt: 40 }), 55)).toEqual({
      ...kept,
      dueAt: 55,
      slot: 55,
    })
  })

  it("SPEC §15: a held retry keeps its due time and slot; grid slots that passed after its slot are skipped", () => {
    const retry = Retry.resolve({ maxRetries: 3, base: 5 }) as Retry.Resolved
    // Slot 10's second attempt was due at 17; resumed at 45: slots 20, 30 and 40 passed.
    const held = row({ plan: grid(10), slot: 10, dueAt: 17, attempt: 2, retry })
    expect(Rules.resume(held, 45)).toEqual({
      dueAt: 17,
      slot: 10,
      skipped: { first: 20, last: 40, count: 3, exact: true },
      retry: true,
      consecutiveFailures: 0,
      resumeFrom: 45,
    })
    // Resumed before the next grid slot: nothing skipped, nothing to remember.
    expect(Rules.resume(held, 20)).toMatchObject({ skipped: undefined, resumeFrom: -1 })
    expect(Rules.resume(held, 21)).toMatchObject({
      skipped: { first: 20, last: 20, count: 1 },
      resumeFrom: 21,
    })
    // A one-shot's held retry skips nothing.
    expect(Rules.resume(row({ slot: 0, dueAt: 7, attempt: 2, retry }), 100)).toMatchObject({
      dueAt: 7,
      slot: 0,
      skipped: undefined,
      retry: true,
      resumeFrom: -1,
    })
  })
})

describe("expire and schedule changes", () => {
  it("SPEC §3: a one-shot taken past its deadline ends failed, as the machine's EXPIRE says", () => {
    expect(Rules.expire()).toBe("failed")
  })

  it("handBack: scheduled again, or held with the pause requested while it was claimed (SPEC §5.5)", () => {
    expect(Rules.handBack(undefined)).toEqual({ state: "scheduled", pausedReason: undefined })
    expect(Rules.handBack("manual")).toEqual({ state: "paused", pausedReason: "manual" })
    expect(Rules.handBack("breaker")).toEqual({ state: "paused", pausedReason: "breaker" })
    expect(Rules.unreadable()).toBe("failed")
  })

  it("SPEC §15: a schedule change waits for a run or a pending retry; otherwise it starts now", () => {
    expect(Rules.scheduleChangeWaits("running", 1)).toBe(true)
    expect(Rules.scheduleChangeWaits("scheduled", 2)).toBe(true)
    expect(Rules.scheduleChangeWaits("paused", 3)).toBe(true)
    expect(Rules.scheduleChangeWaits("scheduled", 1)).toBe(false)
    expect(Rules.scheduleChangeWaits("paused", 1)).toBe(false)
  })
})

describe("update", () => {
  const task = (state: "scheduled" | "running" | "paused", attempt = 1, breaker = false) => ({
    state,
    attempt,
    rank: 1,
    breaker,
  })
  const change = (
    schedule: boolean,
    rank: number | undefined = undefined,
    breaker: "keep" | "remove" | "change" = "keep",
  ) => ({ schedule, rank, breaker })

  it("SPEC §15: a schedule change starts now, unless a run or a pending retry holds the slot", () => {
    expect(Rules.updateStep(task("scheduled"), change(true))).toEqual({
      schedule: "now",
      requeue: true,
      leave: false,
      join: false,
    })
    expect(Rules.updateStep(task("running"), change(true)).schedule).toBe("waits")
    expect(Rules.updateStep(task("scheduled", 2), change(true))).toMatchObject({
      schedule: "waits",
      requeue: false,
    })
    expect(Rules.updateStep(task("paused"), change(true))).toMatchObject({
      schedule: "now",
      requeue: false,
    })
  })

  it("no change of schedule, priority or breaker changes nothing", () => {
    expect(Rules.updateStep(task("scheduled", 1, true), change(false))).toEqual({
      schedule: "none",
      requeue: false,
      leave: false,
      join: false,
    })
  })

  it("SPEC §4, §15: a new priority re-queues a scheduled task; the same priority does not", () => {
    expect(Rules.updateStep(task("scheduled"), change(false, 0)).requeue).toBe(true)
    expect(Rules.updateStep(task("scheduled"), change(false, 1)).requeue).toBe(false)
    expect(Rules.updateStep(task("running"), change(false, 0)).requeue).toBe(false)
  })

  it("SPEC §7: moving between breakers leaves the old one and joins the new one", () => {
    expect(
      Rules.updateStep(task("scheduled", 1, true), change(false, undefined, "change")),
    ).toMatchObject({
      leave: true,
      join: true,
    })
    expect(
      Rules.updateStep(task("scheduled", 1, true), change(false, undefined, "remove")),
    ).toMatchObject({
      leave: true,
      join: false,
    })
    expect(
      Rules.updateStep(task("scheduled", 1, false), change(false, undefined, "remove")),
    ).toMatchObject({
      leave: false,
      join: false,
    })
    expect(
      Rules.updateStep(task("scheduled", 1, false), change(false, undefined, "change")),
    ).toMatchObject({
      leave: false,
      join: true,
    })
  })
})

describe("options declared once", () => {
  it("the key lists derive from Rules.fields; an update takes every key but the fixed ones", () => {
    expect([...Rules.optionKeys]).toEqual(Object.keys(Rules.fields))
    for (const fixed of ["id", "group", "key", "dedup"])
      expect(Rules.updateKeys.has(fixed)).toBe(false)
    expect([...Rules.updateKeys].length).toBe(Rules.optionKeys.size - 4)
    expect([...Kernel.updateKeys]).toEqual([...Rules.updateKeys])
    expect([...Kernel.taskOptionKeys]).toEqual([...Rules.optionKeys])
  })

  it("keysWith without changes is a copy of the keys", () => {
    expect([...Rules.keysWith(Rules.optionKeys, {})]).toEqual([...Rules.optionKeys])
  })

  it("a store extends the core's keys with its own", () => {
    const keys = Rules.keysWith(Rules.optionKeys, { without: ["job"], with: ["handler"] })
    expect(keys.has("job")).toBe(false)
    expect(keys.has("handler")).toBe(true)
    expect(Rules.optionKeys.has("job")).toBe(true)
  })
})
