/**
 * The controls' decisions on one row (`src/internal/controls.ts`), on their own: pause, resume
 * and update each given a row by a store that keeps it in memory, so what they write, record and
 * refuse is read directly (SPEC §5, §15, §19.1).
 */
import { Breaker, Rules, Schedule } from "@tickwork/core"
import { Cron, Effect, Exit, Result, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { Handler } from "../src/index.ts"
import * as Controls from "../src/internal/controls.ts"
import type { ControlEnv } from "../src/internal/env.ts"
import type { EventEntry, KeptRun, Modification, TaskRow } from "../src/internal/model.ts"
import * as Rows from "../src/internal/rows.ts"

/** Slots every 1_000 ms from 0. */
const grid = (Schedule.resolve(Schedule.fixedRate(1_000), 0) as Schedule.Resolved).plan
const mail = Handler.make("mail", Schema.Struct({ to: Schema.String }), () => Effect.void)
const smtp = Breaker.resolve({ failures: 2, coolDown: 100 }) as Breaker.Resolved

/** A scheduled row of a fixed-rate task at slot 3_000, every field distinct. */
const row = (fields: Partial<TaskRow> = {}): TaskRow =>
  ({
    id: "t",
    generation: 2,
    handler: "mail",
    payload: '{"to":"a"}',
    schedule: { kind: "fixed-rate" },
    plan: grid,
    state: "scheduled",
    slot: 3_000,
    runAt: 3_000,
    claimableAt: 3_000,
    attempt: 1,
    runNumber: 4,
    consecutiveFailures: 1,
    deliveries: 0,
    fence: 7,
    leaseOwner: null,
    seq: 17,
    finishedAt: null,
    lastError: null,
    pausedReason: null,
    resumeFrom: -1,
    windowMs: null,
    restart: undefined,
    retry: { maxRetries: 0, base: 0, factor: 1, maxDelay: 0, jitter: "none" },
    missedRuns: "skip",
    pauseAfter: 0,
    timeoutMs: 0,
    priority: 1,
    tags: [],
    breaker: null,
    kept: undefined,
    ...fields,
  }) as unknown as TaskRow

/** What the in-memory store was asked to write, and what it published. */
interface Written {
  readonly decided: Array<Modification>
  readonly published: Array<{ readonly event: EventEntry; readonly handler: string | undefined }>
}

/** A control env at 5_000 whose store holds `stored` (undefined: no live task). */
const envOf = (stored: TaskRow | undefined): ControlEnv & { readonly written: Written } => {
  const written: Written = { decided: [], published: [] }
  let pushes = 41
  const store = {
    modify: (
      _id: string,
      decide: (r: TaskRow) => Modification | undefined | { rejected: unknown },
      committed?: (e: EventEntry) => void,
    ) =>
      Effect.suspend(() => {
        if (stored === undefined) return Effect.succeed(false)
        const m = decide(stored)
        if (m === undefined) return Effect.succeed(false)
        if ("rejected" in m) return Effect.fail(m.rejected)
        written.decided.push(m)
        for (const e of m.events) committed?.(e)
        return Effect.succeed(true)
      }),
  }
  return {
    store,
    options: {
      windowMs: Number.POSITIVE_INFINITY,
      breakers: new Map([["smtp", smtp]]),
      handlers: new Map([["mail", mail]]),
    },
    owner: "p1",
    now: () => 5_000,
    mono: () => 0,
    nextSeq: () => ++pushes,
    random: { next: () => 0.5 },
    publish: (event: EventEntry, handler?: string) => {
      written.published.push({ event, handler })
    },
    written,
  } as unknown as ControlEnv & { readonly written: Written }
}

const run = <A, E>(self: Effect.Effect<A, E>) => Effect.runSync(Effect.exit(self))

describe("pause by hand, on one row (SPEC §5)", () => {
  it("a scheduled task pauses at once, keeping its slot, with a paused event", () => {
    const env = envOf(row())
    expect(run(Controls.pause(env, "t", "cli"))).toStrictEqual(Exit.succeed(true))
    const [m] = env.written.decided
    expect(m?.update).toStrictEqual(Rows.paused(row(), "manual", 5_000))
    expect(m?.breaker).toBeUndefined()
    expect(m?.events).toHaveLength(1)
    expect(m?.events[0]).toMatchObject({
      kind: "paused",
      cause: "manual",
      origin: "cli",
      at: 5_000,
      owner: null,
    })
  })

  it("a task in a breaker stops being its probe", () => {
    const env = envOf(row({ breaker: "shared:smtp" }))
    expect(run(Controls.pause(env, "t"))).toStrictEqual(Exit.succeed(true))
    expect(env.written.decided[0]?.breaker).toStrictEqual({
      leave: null,
      join: null,
      unprobe: "shared:smtp",
    })
  })

  it("a running task is asked to pause when its run ends, with no event yet", () => {
    const running = row({ state: "running", claimableAt: 9_000, leaseOwner: "p2" })
    const env = envOf(running)
    expect(run(Controls.pause(env, "t"))).toStrictEqual(Exit.succeed(true))
    expect(env.written.decided[0]).toStrictEqual({
      update: Rows.requested(running, "manual", 5_000),
      events: [],
    })
  })

  it("a task already paused by hand, or asked to be, or unknown: false, nothing written", () => {
    for (const stored of [
      row({ state: "paused", pausedReason: "manual" }),
      row({ state: "running", pausedReason: "manual" }),
      undefined,
    ]) {
      const env = envOf(stored)
      expect(run(Controls.pause(env, "t"))).toStrictEqual(Exit.succeed(false))
      expect(env.written.decided).toEqual([])
    }
  })

  it("a task its breaker holds becomes paused by hand, but the answer is false (outranked)", () => {
    const held = row({ state: "paused", pausedReason: "breaker" })
    const env = envOf(held)
    expect(run(Controls.pause(env, "t"))).toStrictEqual(Exit.succeed(false))
    expect(env.written.decided[0]).toStrictEqual({
      update: Rows.paused(held, "manual", 5_000),
      events: [],
    })
    // Running, held when its run ends: the request becomes the hand's.
    const running = row({ state: "running", pausedReason: "breaker", claimableAt: 9_000 })
    const env2 = envOf(running)
    expect(run(Controls.pause(env2, "t"))).toStrictEqual(Exit.succeed(false))
    expect(env2.written.decided[0]?.update).toStrictEqual(Rows.requested(running, "manual", 5_000))
  })

  it("drops a manual run waiting with a held task; the run it set aside is the task's again (SPEC §19.1)", () => {
    const setAside: KeptRun = {
      slot: 1_000,
      dueAt: 1_000,
      attempt: 1,
      deliveries: 0,
      seq: 9,
      resumeFrom: -1,
    }
    const held = row({ state: "paused", pausedReason: "breaker", kept: setAside })
    const env = envOf(held)
    run(Controls.pause(env, "t"))
    expect(env.written.decided[0]?.update).toMatchObject({
      state: "paused",
      pausedReason: "manual",
      slot: 1_000,
      runAt: 1_000,
      seq: 9,
      kept: null,
    })
    // Scheduled with a manual run waiting: paused at the run it set aside.
    const env2 = envOf(row({ kept: setAside }))
    expect(run(Controls.pause(env2, "t"))).toStrictEqual(Exit.succeed(true))
    expect(env2.written.decided[0]?.update).toMatchObject({ slot: 1_000, kept: null })
    // Without one, `kept` is not written at all.
    const env3 = envOf(row())
    run(Controls.pause(env3, "t"))
    expect(env3.written.decided[0]?.update).not.toHaveProperty("kept")
  })
})

describe("resume, on one row (SPEC §15)", () => {
  it("a paused task resumes where Rules.resume says, the slots that passed skipped", () => {
    const paused = row({ state: "paused", pausedReason: "manual", slot: 1_000, runAt: 1_000 })
    const env = envOf(paused)
    expect(run(Controls.resume(env, "t", "cli"))).toStrictEqual(Exit.succeed(true))
    const r = Rows.resume(paused, Number.POSITIVE_INFINITY, 5_000, 42)
    const [m] = env.written.decided
    expect(m?.update).toStrictEqual(r.update)
    expect(m?.events.map((e) => [e.kind, e.cause, e.origin, e.firstSlot, e.lastSlot])).toEqual([
      ["skipped", "paused", "cli", 1_000, 4_000],
      ["resumed", "manual", "cli", 5_000, 5_000],
    ])
    expect(m?.events[1]?.detail).toBe("due at 5000")
    // Its own events are labelled with its handler.
    expect(env.written.published.map((p) => p.handler)).toEqual(["mail", "mail"])
  })

  it("with nothing passed, only the resumed event", () => {
    const paused = row({ state: "paused", pausedReason: "failures", slot: 6_000, runAt: 6_000 })
    const env = envOf(paused)
    run(Controls.resume(env, "t"))
    expect(env.written.decided[0]?.events.map((e) => [e.kind, e.cause])).toEqual([
      ["resumed", "failures"],
    ])
  })

  it("a running task asked to pause has the request withdrawn; one not asked: false", () => {
    const asked = row({ state: "running", pausedReason: "manual", claimableAt: 9_000 })
    const env = envOf(asked)
    expect(run(Controls.resume(env, "t"))).toStrictEqual(Exit.succeed(true))
    expect(env.written.decided[0]).toStrictEqual({
      update: Rows.requested(asked, null, 5_000),
      events: [],
    })
    const env2 = envOf(row({ state: "running" }))
    expect(run(Controls.resume(env2, "t"))).toStrictEqual(Exit.succeed(false))
    const env3 = envOf(row())
    expect(run(Controls.resume(env3, "t"))).toStrictEqual(Exit.succeed(false))
    expect([...env2.written.decided, ...env3.written.decided]).toEqual([])
  })
})

describe("update, on one row (SPEC §15)", () => {
  /** The update of `stored` with `changes` at 5_000, or its error. */
  const decide = (stored: TaskRow, changes: Controls.Changes) =>
    Controls.decideUpdate(envOf(stored), stored, changes, 5_000)
  const refusal = (stored: TaskRow, changes: unknown) => {
    const m = decide(stored, changes as Controls.Changes)
    expect(m).toHaveProperty("rejected")
    return (m as { rejected: { _tag: string; field: string; value: unknown } }).rejected
  }

  it("refuses changes that are not an object, an unknown key, the id or the handler", () => {
    for (const changes of [null, 3]) {
      const exit = run(Controls.update(envOf(row()), "t", changes as never))
      expect(exit).toMatchObject({ _tag: "Failure" })
      expect(JSON.stringify(exit)).toContain('"field":"changes"')
    }
    for (const key of ["id", "handler", "job", "colour"]) {
      const env = envOf(row())
      const exit = run(Controls.update(env, "t", { [key]: 1 } as never))
      expect(JSON.stringify(exit)).toContain(`"field":"${key}"`)
      expect(env.written.decided).toEqual([])
    }
  })

  it("refuses a custom schedule, a bad option, a bad timeout, an unknown breaker", () => {
    const custom = Schedule.custom(() => undefined)
    expect(refusal(row(), { schedule: custom })).toMatchObject({
      _tag: "NotDurable",
      field: "schedule",
      value: custom,
    })
    expect(refusal(row(), { priority: "urgent" as never })).toMatchObject({ field: "priority" })
    expect(refusal(row(), { timeout: -1 })).toMatchObject({ field: "timeout", value: -1 })
    expect(refusal(row(), { breaker: "nope" })).toMatchObject({ field: "breaker", value: "nope" })
  })

  it("refuses a payload its schema refuses, or one for a handler not registered", () => {
    expect(refusal(row(), { payload: { to: 1 } })).toMatchObject({
      _tag: "InvalidPayload",
      field: "payload.to",
    })
    expect(refusal(row({ handler: "fax" }), { payload: {} })).toMatchObject({
      _tag: "UnknownHandler",
      field: "handler",
      value: "fax",
    })
  })

  it("a new schedule moves a scheduled task to its first slot in a new push", () => {
    const stored = row()
    const m = decide(stored, { schedule: Schedule.fixedRate(500) }) as Modification
    const resolved = Schedule.resolve(Schedule.fixedRate(500), 5_000) as Schedule.Resolved
    expect(m.update).toMatchObject({
      slot: resolved.first,
      runAt: resolved.first,
      seq: 42,
      resumeFrom: -1,
    })
    expect(m.update.define?.schedule).toStrictEqual(
      Result.getOrThrow(Schedule.encode(Schedule.fixedRate(500), resolved)),
    )
    expect(m.update.define?.restart).toBeUndefined()
    expect(m.breaker).toBeUndefined()
  })

  it("a new schedule of a running task waits for its slot to end, as the row's restart", () => {
    const running = row({ state: "running", claimableAt: 9_000 })
    const m = decide(running, { schedule: Schedule.fixedRate(500) }) as Modification
    expect(m.update.define?.restart).toStrictEqual(Schedule.fixedRate(500))
    expect(m.update.define?.schedule).toStrictEqual(running.schedule)
    expect(m.update).toMatchObject({ slot: 3_000, seq: 17 })
  })

  it("keeps what it is not given; sets what it is", () => {
    const stored = row({ windowMs: 300, timeoutMs: 70 })
    const same = decide(stored, {}) as Modification
    expect(same.update.define).toStrictEqual({
      payload: stored.payload,
      schedule: stored.schedule,
      restart: undefined,
      priority: 1,
      retry: stored.retry,
      missedRuns: "skip",
      pauseAfter: 0,
      timeoutMs: 70,
      tags: [],
      windowMs: 300,
      breaker: null,
    })
    expect(same.update.seq).toBe(17)
    const given = decide(stored, {
      priority: "high",
      timeout: "2 seconds",
      tags: ["x"],
      window: null,
      missedRuns: "catch-up",
      pauseAfterConsecutiveFailures: 3,
      payload: { to: "b" },
    }) as Modification
    const valid = Rules.validateChanges({ priority: "high" }, 5_000, {
      plan: grid,
      windowMs: 300,
    }) as { rank: number }
    expect(given.update.define).toMatchObject({
      priority: valid.rank,
      timeoutMs: 2_000,
      tags: ["x"],
      windowMs: null,
      missedRuns: "catch-up",
      pauseAfter: 3,
      payload: '{"to":"b"}',
    })
    // A new rank re-queues a scheduled task.
    expect(given.update.seq).toBe(42)
    expect((decide(stored, { window: 900 }) as Modification).update.define?.windowMs).toBe(900)
  })

  it("moves the task between breakers: joins, leaves, or creates its own", () => {
    const join = decide(row(), { breaker: "smtp" }) as Modification
    expect(join.breaker).toStrictEqual({ leave: null, join: "shared:smtp", own: undefined })
    expect(join.update.define?.breaker).toBe("shared:smtp")
    const inSmtp = row({ breaker: "shared:smtp" })
    expect((decide(inSmtp, { breaker: "smtp" }) as Modification).breaker).toBeUndefined()
    const leave = decide(inSmtp, { breaker: null }) as Modification
    expect(leave.breaker).toStrictEqual({ leave: "shared:smtp", join: null, own: undefined })
    expect(leave.update.define?.breaker).toBeNull()
    const own = decide(inSmtp, { breaker: { failures: 3, coolDown: 50 } }) as Modification
    expect(own.breaker).toStrictEqual({
      leave: "shared:smtp",
      join: "task:t",
      own: {
        key: "task:t",
        name: "t",
        policy: Breaker.resolve({ failures: 3, coolDown: 50 }),
      },
    })
    // Its own breaker given again: re-defined in place (leaves and joins the same row).
    const again = decide(row({ breaker: "task:t" }), {
      breaker: { failures: 3, coolDown: 50 },
    }) as Modification
    expect(again.breaker).toMatchObject({ leave: "task:t", join: "task:t" })
  })

  it("a new schedule drops a manual run waiting; the step is the run it set aside's (SPEC §19.1)", () => {
    const setAside: KeptRun = {
      slot: 1_000,
      dueAt: 1_000,
      attempt: 1,
      deliveries: 0,
      seq: 9,
      resumeFrom: -1,
    }
    const stored = row({ kept: setAside })
    const m = decide(stored, { schedule: Schedule.fixedRate(500) }) as Modification
    expect(m.update.kept).toBeNull()
    // Any other change keeps it.
    const p = decide(stored, { priority: "high" }) as Modification
    expect(p.update).not.toHaveProperty("kept")
    expect(p.update).toMatchObject({ slot: 3_000 })
  })

  it("through update: one updated event naming the fields, and true", () => {
    const env = envOf(row())
    expect(run(Controls.update(env, "t", { priority: "high", tags: ["x"] }))).toStrictEqual(
      Exit.succeed(true),
    )
    const [m] = env.written.decided
    expect(m?.events).toHaveLength(1)
    expect(m?.events[0]).toMatchObject({ kind: "updated", owner: "p1", firstSlot: 3_000 })
    const env2 = envOf(row())
    const exit = run(Controls.update(env2, "t", { timeout: -1 }))
    expect(exit).toMatchObject({ _tag: "Failure" })
    expect(env2.written.decided).toEqual([])
  })
})

describe("a bulk control (SPEC §5)", () => {
  it("walks every page of matches, returning the ids it changed", () => {
    const ids = Array.from({ length: 1_001 }, (_, k) => `t${String(k).padStart(4, "0")}`)
    const asked: Array<string | undefined> = []
    const env = {
      store: {
        list: (q: { after?: string; limit: number }) =>
          Effect.sync(() => {
            asked.push(q.after)
            const from = q.after === undefined ? 0 : ids.indexOf(q.after) + 1
            return ids.slice(from, from + q.limit).map((id) => ({ id }))
          }),
      },
    } as unknown as ControlEnv
    const changed = Effect.runSync(
      Controls.changeAll(env, {}, (id) => Effect.succeed(id.endsWith("7"))),
    )
    expect(asked).toEqual([undefined, "t0499", "t0999"])
    expect(changed).toEqual(ids.filter((id) => id.endsWith("7")))
  })
})

describe("the controls' decisions, in full", () => {
  /** The update of `stored` with `changes` at 5_000, or its error. */
  const decide = (stored: TaskRow, changes: Controls.Changes) =>
    Controls.decideUpdate(envOf(stored), stored, changes, 5_000)
  /** The typed error `update` fails with (a defect would throw here). */
  const failure = (stored: TaskRow, changes: unknown) =>
    Effect.runSync(Effect.flip(Controls.update(envOf(stored), "t", changes as never))) as {
      readonly _tag: string
      readonly field: string
      readonly message: string
    }

  it("a running task outranked by hand records no event yet", () => {
    const running = row({ state: "running", pausedReason: "failures", claimableAt: 9_000 })
    const env = envOf(running)
    expect(run(Controls.pause(env, "t"))).toStrictEqual(Exit.succeed(false))
    expect(env.written.decided).toStrictEqual([
      { update: Rows.requested(running, "manual", 5_000), events: [] },
    ])
  })

  it("events of other tasks a resume wrote (its breaker's) carry no handler of this task", () => {
    const paused = row({ state: "paused", pausedReason: "manual", slot: 6_000, runAt: 6_000 })
    const env = envOf(paused)
    const other = { taskId: "other", kind: "resumed" } as unknown as EventEntry
    const modify = env.store.modify
    Object.assign(env.store, {
      modify: (id: string, f: never, committed?: (e: EventEntry) => void) =>
        Effect.tap(modify(id, f, committed), () => Effect.sync(() => committed?.(other))),
    })
    run(Controls.resume(env, "t"))
    expect(env.written.published.map((p) => [p.event.taskId, p.handler])).toEqual([
      ["t", "mail"],
      ["other", undefined],
    ])
  })

  it("a new schedule is checked against the task's own window (none on a fixed delay)", () => {
    const windowed = row({ windowMs: 300 })
    expect(decide(windowed, { schedule: Schedule.fixedDelay(100) })).toMatchObject({
      rejected: { field: "window", value: 300 },
    })
    expect(decide(row(), { schedule: Schedule.fixedDelay(100) })).not.toHaveProperty("rejected")
  })

  it("a schedule with no stored form is refused: a parsed Cron object", () => {
    const parsed = Schedule.cron(Cron.parseUnsafe("0 * * * *"))
    expect(decide(row(), { schedule: parsed })).toMatchObject({
      rejected: { _tag: "NotDurable", field: "schedule", value: parsed },
    })
    expect((decide(row(), { schedule: parsed }) as { rejected: Error }).rejected.message).toContain(
      "a parsed Cron object cannot be stored",
    )
  })

  it("a payload given as undefined is no change", () => {
    const m = decide(row(), { payload: undefined }) as Modification
    expect(m.update.define?.payload).toBe('{"to":"a"}')
  })

  it("keeps the task's breaker when none is given; removing none moves nothing", () => {
    const inSmtp = row({ breaker: "shared:smtp" })
    const kept = decide(inSmtp, { priority: "high" }) as Modification
    expect(kept.update.define?.breaker).toBe("shared:smtp")
    expect(kept.breaker).toBeUndefined()
    expect((decide(row(), { breaker: null }) as Modification).breaker).toBeUndefined()
  })

  it("says why: changes not an object, a handler not registered", () => {
    expect(failure(row(), null)).toMatchObject({
      _tag: "InvalidOption",
      field: "changes",
      message: "changes must be an object, got null",
    })
    expect(failure(row({ handler: "fax" }), { payload: {} })).toMatchObject({
      _tag: "UnknownHandler",
      message:
        'handler "fax" is not registered with this scheduler, so its payload cannot be checked',
    })
    expect(failure(row(), { timeout: -1 })).toMatchObject({
      _tag: "InvalidOption",
      field: "timeout",
    })
  })
})
