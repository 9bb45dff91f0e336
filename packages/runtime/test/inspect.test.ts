import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Option } from "effect"
import { TestClock } from "effect/testing"
import { createActor, type InspectionEvent, waitFor } from "xstate"
import { Inspect, Lifecycle, Schedule, Scheduler, type Task } from "../src/index.ts"
import { hubOf } from "../src/internal/inspection.ts"

/** What the comparison looks at: type, event, action, snapshot value, context and status. */
const view = (e: InspectionEvent) => {
  switch (e.type) {
    case "@xstate.actor":
      return { type: e.type }
    case "@xstate.event":
      return { type: e.type, event: e.event }
    case "@xstate.action":
      return { type: e.type, action: e.action }
    case "@xstate.snapshot": {
      const s = e.snapshot as Inspect.TaskSnapshot
      return { type: e.type, event: e.event, value: s.value, context: s.context, status: s.status }
    }
    default:
      return { type: e.type }
  }
}

/** What a real XState actor of the task machine reports for `events` (microsteps aside). */
const reference = (
  input: { maxRetries: number; pauseAfter: number },
  events: ReadonlyArray<Lifecycle.TaskEvent>,
) => {
  const log: Array<InspectionEvent> = []
  const actor = createActor(Lifecycle.machine, { input, inspect: (e) => log.push(e) })
  actor.start()
  // XState warns about events sent to a final actor (it still inspects them).
  const warn = console.warn
  console.warn = () => {}
  try {
    for (const event of events) actor.send(event)
  } finally {
    console.warn = warn
  }
  return log.filter((e) => e.type !== "@xstate.microstep").map(view)
}

const plain = { maxRetries: 0, pauseAfter: 0 }

/** An inspected scheduler and everything it reported. */
const inspected = (options: Scheduler.SchedulerOptions = {}) =>
  Effect.gen(function* () {
    const log: Array<InspectionEvent> = []
    // "interrupt": closing the test's scope must not wait for runs on a clock nobody moves.
    const s = yield* Scheduler.make({
      shutdown: "interrupt",
      ...options,
      inspect: (e) => log.push(e),
    })
    const of = (id: string) =>
      log.filter(
        (e) =>
          e.actorRef.sessionId !== log[0]?.actorRef.sessionId &&
          (e.actorRef as { id?: string }).id === id,
      )
    return { s, log, of }
  })

describe("inspection events match the task machine", () => {
  it.effect("a retrying task: every FAIL branch, then paused", () =>
    Effect.gen(function* () {
      const { s, of } = yield* inspected()
      yield* s.schedule({
        id: "flaky",
        schedule: Schedule.fixedRate(100),
        retry: { maxRetries: 1, base: 10 },
        pauseAfterConsecutiveFailures: 2,
        job: Effect.fail("boom"),
      })
      yield* TestClock.adjust(1_000)
      expect(yield* s.status("flaky")).toBe("paused")
      // slot 0: fails, retry at 10 fails: slot failed, next slot 100; the same at 100 and 110,
      // where the second failed slot in a row pauses it.
      const expected = reference({ maxRetries: 1, pauseAfter: 2 }, [
        { type: "START" },
        { type: "FAIL" },
        { type: "START" },
        { type: "FAIL", nextSlot: 100 },
        { type: "START" },
        { type: "FAIL" },
        { type: "START" },
        // The second failed slot in a row pauses it (SPEC §7), holding its next slot.
        { type: "FAIL", nextSlot: 200 },
      ])
      expect(of("flaky").map(view)).toEqual(expected)
      // The exact sequence, spelled out once.
      expect(
        expected.map((e) =>
          e.type === "@xstate.snapshot"
            ? `snapshot ${e.value} a${e.context.attempt} r${e.context.runNumber} f${e.context.consecutiveFailures}`
            : e.type === "@xstate.event"
              ? `event ${e.event.type}${"nextSlot" in e.event ? `(${e.event.nextSlot})` : ""}`
              : e.type === "@xstate.action"
                ? `action ${e.action.type}`
                : "actor",
        ),
      ).toEqual([
        "actor",
        "event xstate.init",
        "snapshot scheduled a1 r0 f0",
        "event START",
        "snapshot running a1 r1 f0",
        "event FAIL",
        "action scheduleRetry",
        "snapshot scheduled a2 r1 f0",
        "event START",
        "snapshot running a2 r2 f0",
        "event FAIL(100)",
        "action scheduleNext",
        "snapshot scheduled a1 r2 f1",
        "event START",
        "snapshot running a1 r3 f1",
        "event FAIL",
        "action scheduleRetry",
        "snapshot scheduled a2 r3 f1",
        "event START",
        "snapshot running a2 r4 f1",
        "event FAIL(200)",
        "action scheduleNext",
        "snapshot paused a1 r4 f2",
      ])
    }),
  )

  it.effect("a task that retries and then succeeds, recurring", () =>
    Effect.gen(function* () {
      const { s, of } = yield* inspected()
      let runs = 0
      yield* s.schedule({
        id: "eventually",
        schedule: Schedule.fixedRate(100, { delay: 50 }),
        retry: { maxRetries: 2, base: 5 },
        job: Effect.suspend(() => (++runs % 3 === 0 ? Effect.void : Effect.fail("not yet"))),
      })
      yield* TestClock.adjust(100)
      expect(runs).toBe(3)
      expect(of("eventually").map(view)).toEqual(
        reference({ maxRetries: 2, pauseAfter: 0 }, [
          { type: "START" },
          { type: "FAIL" },
          { type: "START" },
          { type: "FAIL" },
          { type: "START" },
          { type: "SUCCEED", nextSlot: 150 },
        ]),
      )
    }),
  )

  it.effect(
    "a task cancelled while running: the late outcome is an event the final actor ignores",
    () =>
      Effect.gen(function* () {
        const { s, of } = yield* inspected()
        yield* s.schedule({ id: "long", schedule: Schedule.once(10), job: Effect.sleep(50) })
        yield* TestClock.adjust(30)
        expect(yield* s.status("long")).toBe("running")
        expect(yield* s.cancel("long")).toBe(true)
        const expected = reference(plain, [
          { type: "START" },
          { type: "CANCEL" },
          { type: "SUCCEED" },
        ])
        // Before the run ends: everything but that last event.
        expect(of("long").map(view)).toEqual(expected.slice(0, -1))
        yield* TestClock.adjust(100)
        expect(of("long").map(view)).toEqual(expected)
        expect(expected.slice(-3)).toEqual([
          { type: "@xstate.event", event: { type: "CANCEL" } },
          {
            type: "@xstate.snapshot",
            event: { type: "CANCEL" },
            value: "cancelled",
            context: {
              attempt: 1,
              maxRetries: 0,
              runNumber: 1,
              consecutiveFailures: 0,
              pauseAfter: 0,
              pauseRequested: false,
            },
            status: "done",
          },
          { type: "@xstate.event", event: { type: "SUCCEED" } },
        ])
      }),
  )

  it.effect("a task cancelled while running with interrupt: its outcome is a FAIL", () =>
    Effect.gen(function* () {
      const { s, of } = yield* inspected()
      yield* s.schedule({ id: "long", schedule: Schedule.once(10), job: Effect.never })
      yield* TestClock.adjust(30)
      yield* s.cancel("long", { interrupt: true })
      yield* TestClock.adjust(1)
      expect(of("long").map(view)).toEqual(
        reference(plain, [{ type: "START" }, { type: "CANCEL" }, { type: "FAIL" }]),
      )
    }),
  )

  it.effect("a task cancelled while scheduled", () =>
    Effect.gen(function* () {
      const { s, of } = yield* inspected()
      yield* s.schedule({ id: "later", schedule: Schedule.once(100), job: Effect.void })
      yield* s.cancel("later")
      yield* TestClock.adjust(200)
      expect(of("later").map(view)).toEqual(reference(plain, [{ type: "CANCEL" }]))
    }),
  )
})

describe("actors", () => {
  it.effect("the timing actor is the root and every task's parent", () =>
    Effect.gen(function* () {
      const { s, log } = yield* inspected()
      yield* s.schedule({ id: "a", schedule: Schedule.once(5), job: Effect.void })
      const generated = yield* s.schedule({ schedule: Schedule.fixedRate(10), job: Effect.void })
      yield* TestClock.adjust(25)
      const timing = log[0]?.actorRef as unknown as Record<string, unknown>
      expect(log.slice(0, 3).map((e) => [e.type, e.actorRef])).toEqual([
        ["@xstate.actor", timing],
        ["@xstate.event", timing],
        ["@xstate.snapshot", timing],
      ])
      expect(timing.id).toBe("timing")
      expect(timing._parent).toBeUndefined()
      const tasks = log.filter((e) => e.actorRef !== (timing as unknown))
      expect(tasks.length).toBeGreaterThan(10)
      for (const e of tasks) {
        const ref = e.actorRef as unknown as Record<string, unknown>
        expect(ref._parent).toBe(timing)
        expect(e.rootId).toBe(timing.sessionId)
        // The definition the Stately inspector draws.
        expect((ref.logic as { config: unknown }).config).toBe(Lifecycle.machine.config)
        if (e.type === "@xstate.event" && e.event.type !== "CANCEL") {
          expect(e.sourceRef).toBe(timing)
        }
      }
      const actors = tasks.filter((e) => e.type === "@xstate.actor").map((e) => e.actorRef)
      expect(actors.map((r) => (r as unknown as { id: string }).id)).toEqual(["a", generated])
      expect(new Set(actors.map((r) => r.sessionId)).size).toBe(2)
      // getSnapshot() is the task's latest snapshot (inspectors read it).
      const first = actors[0]
      expect(
        first === undefined ? undefined : (first.getSnapshot() as Inspect.TaskSnapshot).value,
      ).toBe("done")
    }),
  )

  it.effect("a reused id is a new actor; a late outcome of the old one does not touch it", () =>
    Effect.gen(function* () {
      const { s, log } = yield* inspected()
      yield* s.schedule({ id: "job", schedule: Schedule.once(0), job: Effect.sleep(50) })
      yield* TestClock.adjust(10)
      yield* s.cancel("job")
      yield* s.schedule({ id: "job", schedule: Schedule.fixedRate(100), job: Effect.void })
      yield* TestClock.adjust(60) // the old run ends at 50
      const sessions = [...new Set(log.slice(3).map((e) => e.actorRef.sessionId))]
      expect(sessions).toHaveLength(2)
      const second = log.filter((e) => e.actorRef.sessionId === sessions[1]).map(view)
      expect(second).toEqual(
        reference(plain, [{ type: "START" }, { type: "SUCCEED", nextSlot: 110 }]),
      )
      expect((yield* Inspect.snapshot(s, "job")).pipe(Option.map((x) => x.value))).toEqual(
        Option.some("scheduled"),
      )
    }),
  )

  it.effect("snapshots agree with the scheduler for a mixed workload", () =>
    Effect.gen(function* () {
      const { s } = yield* inspected({ workers: 2 })
      let k = 0
      for (let i = 0; i < 30; i++) {
        yield* s.schedule({
          id: `t${i}`,
          schedule: i % 3 === 0 ? Schedule.once(i * 7) : Schedule.fixedRate(20 + i, { delay: i }),
          retry: { maxRetries: i % 4, base: 3 },
          pauseAfterConsecutiveFailures: i % 5,
          missedRuns: i % 2 === 0 ? "coalesce" : "skip",
          job: Effect.suspend(() => (++k % 3 === 0 ? Effect.fail("x") : Effect.sleep(k % 17))),
        })
      }
      for (let step = 0; step < 20; step++) {
        yield* TestClock.adjust(13)
        if (step === 5) yield* s.cancel("t4")
        if (step === 9) yield* s.cancel("t8", { interrupt: true })
        for (const info of yield* s.tasks()) {
          const snap = yield* Inspect.snapshot(s, info.id)
          if (Option.isNone(snap)) {
            expect(Lifecycle.isFinal(info.state)).toBe(true)
            continue
          }
          expect(snap.value.value).toBe(info.state)
          expect(snap.value.context).toMatchObject({
            attempt: info.attempt,
            runNumber: info.runNumber,
            consecutiveFailures: info.consecutiveFailures,
          })
        }
      }
    }),
  )

  it.effect("final tasks leave no inspection state behind", () =>
    Effect.gen(function* () {
      const { s } = yield* inspected({ workers: 3 })
      const hub = hubOf(s)
      for (let i = 0; i < 200; i++) {
        yield* s.schedule({ schedule: Schedule.once(i % 20), job: Effect.sleep(i % 7) })
      }
      yield* s.schedule({
        id: "cancelled-running",
        schedule: Schedule.once(0),
        job: Effect.sleep(500),
      })
      yield* TestClock.adjust(5)
      yield* s.cancel("cancelled-running")
      expect(hub?.size).toBeGreaterThan(0)
      yield* TestClock.adjust(1_000)
      expect(hub?.size).toBe(0)
    }),
  )
})

describe("off and on", () => {
  it.effect("without `inspect` there is no inspection: the listener is called as given", () =>
    Effect.gen(function* () {
      const calls: Array<string> = []
      const listener = {
        accepted: (id: Task.TaskId) => calls.push(`accepted ${id}`),
        started: (run: Task.RunInfo) => calls.push(`started ${run.id}`),
        completed: (r: Task.RunRecord) => calls.push(`completed ${r.id}`),
      }
      const s = yield* Scheduler.make({ listener })
      yield* s.schedule({ id: "a", schedule: Schedule.once(1), job: Effect.void })
      yield* TestClock.adjust(5)
      expect(calls).toEqual(["accepted a", "started a", "completed a"])
      expect(hubOf(s)).toBeUndefined()
      expect(yield* Inspect.snapshot(s, "a")).toEqual(Option.none())
      const exit = yield* Effect.exit(Effect.scoped(Inspect.watch(s, "a")))
      expect(Exit.isFailure(exit) && String(exit.cause)).toContain("`inspect` option")
    }),
  )

  it.effect("with both, inspection and the listener each hear everything", () =>
    Effect.gen(function* () {
      const calls: Array<string> = []
      const events: Array<string> = []
      const s = yield* Scheduler.make({
        shutdown: "interrupt",
        listener: {
          started: (run) => calls.push(`started ${run.id}`),
          cancelled: (o) => calls.push(`cancelled ${o.id}`),
        },
        inspect: { next: (e) => events.push(e.type) },
      })
      yield* s.schedule({ id: "a", schedule: Schedule.once(1), job: Effect.sleep(10) })
      yield* TestClock.adjust(5)
      yield* s.cancel("a")
      expect(calls).toEqual(["started a", "cancelled a"])
      expect(events.filter((t) => t === "@xstate.snapshot")).toHaveLength(4) // timing + 3
    }),
  )

  it.effect("an observer that throws does not break the scheduler", () =>
    Effect.gen(function* () {
      const errors: Array<unknown> = []
      const s = yield* Scheduler.make({
        inspect: {
          next: () => {
            throw new Error("observer bug")
          },
          error: (e) => errors.push(e),
        },
      })
      yield* s.schedule({ id: "a", schedule: Schedule.fixedRate(10), job: Effect.void })
      yield* TestClock.adjust(35)
      expect(yield* s.ledger("a")).toHaveLength(4)
      expect(errors.length).toBeGreaterThan(5)
    }),
  )
})

describe("watch", () => {
  it.effect("a live XState actor follows the task until it is final", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make({ inspect: {}, shutdown: "interrupt" })
      yield* s.schedule({
        id: "three",
        schedule: Schedule.custom((slot) =>
          slot === undefined ? 10 : slot < 30 ? slot + 10 : undefined,
        ),
        retry: { maxRetries: 1, base: 1 },
        job: (run) =>
          run.scheduledFor === 20 && run.attempt === 1 ? Effect.fail("once") : Effect.sleep(2),
      })
      const watched = yield* Inspect.watch(s, "three")
      const actor = Option.getOrThrow(watched)
      expect(actor.id).toBe("three")
      const seen: Array<string> = []
      actor.subscribe((snap) => seen.push(`${snap.value}:${snap.context.runNumber}`))
      // XState's usual tools work on it.
      const ran = waitFor(actor, (snap) => snap.context.runNumber >= 2)
      yield* TestClock.adjust(21)
      const second = yield* Effect.promise(() => ran)
      expect(second.value).toBe("running")
      expect(second.context.runNumber).toBe(2)
      yield* TestClock.adjust(100)
      expect(seen).toEqual([
        "running:1",
        "scheduled:1",
        "running:2",
        "scheduled:2",
        "running:3",
        "scheduled:3",
        "running:4",
        "done:4",
      ])
      expect(actor.getSnapshot().status).toBe("done")
      expect(yield* s.status("three")).toBe("done")
    }),
  )

  it.effect("joins mid-life with the task's exact snapshot, and stops with its scope", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make({ inspect: {}, shutdown: "interrupt" })
      yield* s.schedule({
        id: "tick",
        schedule: Schedule.fixedRate(10),
        retry: { maxRetries: 2 },
        job: Effect.void,
      })
      yield* TestClock.adjust(25)
      const actor = yield* Effect.scoped(
        Effect.gen(function* () {
          const actor = Option.getOrThrow(yield* Inspect.watch(s, "tick"))
          const now = Option.getOrThrow(yield* Inspect.snapshot(s, "tick"))
          expect(actor.getSnapshot().value).toBe(now.value)
          expect(actor.getSnapshot().context).toEqual(now.context)
          expect(actor.getSnapshot().context).toMatchObject({ runNumber: 3, maxRetries: 2 })
          yield* TestClock.adjust(10)
          expect(actor.getSnapshot().context.runNumber).toBe(4)
          return actor
        }),
      )
      expect(actor.getSnapshot().status).toBe("stopped")
      yield* TestClock.adjust(10)
      expect(actor.getSnapshot().context.runNumber).toBe(4) // no longer followed
      expect(yield* Effect.scoped(Inspect.watch(s, "nope"))).toEqual(Option.none())
    }),
  )
})
