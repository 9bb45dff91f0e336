/**
 * SPEC §7 on stored rows: circuit breakers, per task or shared by name, kept in
 * `tickwork_breakers` and moved in the transaction of the completion that counts the slot. On
 * SQLite in virtual time (the whole cycle, across a restart); on PostgreSQL with two processes
 * of a fleet in `breakers-pg.test.ts` (real time, kept apart so that this file stays fast to
 * rerun, e.g. for each mutant of a mutation run).
 */
import { describe, expect, it } from "@effect/vitest"
import { Kernel, Schedule, Task } from "@tickwork/core"
import { Effect, Option, Schema } from "effect"
import { type DurableScheduler, Handler } from "../src/index.ts"
import { advance, inFile, failingMail as mail, sqlite, withScheduler } from "./helpers.ts"

/** The breaker events of these tasks' ledgers, in order: `<new state>@<at> (<task>)`. */
const transitions = (d: DurableScheduler.DurableSchedulerShape, ids: ReadonlyArray<string>) =>
  Effect.map(Effect.forEach(ids, d.ledger), (ledgers) =>
    ledgers
      .flat()
      .flatMap((o) => (o.kind === "breaker" ? [o] : []))
      .sort((a, b) => a.at - b.at)
      .map((o) => `${o.breaker} ${o.cause}@${o.at} (${o.taskId})`),
  )

/** The core kernel's trace of the shared-breaker test's tasks (`a` fails before 250). */
const kernelTrace = (steps: ReadonlyArray<number>) => {
  const k = new Kernel.Kernel<string>({
    breakers: { smtp: { failures: 2, coolDown: 100, factor: 2, maxCoolDown: 300 } },
  })
  k.schedule({ id: "a", job: "a", schedule: Schedule.fixedRate(100), breaker: "smtp" }, 0)
  k.schedule({ id: "b", job: "b", schedule: Schedule.once(250), breaker: "smtp" }, 0)
  const out: Array<string> = []
  for (const now of steps) {
    for (let run = k.takeDue(now); run !== undefined; run = k.takeDue(now)) {
      out.push(`${run.job}@${run.startedAt}`)
      const fails = run.job === "a" && run.startedAt < 250
      k.complete(run, fails ? Task.failed("smtp down") : Task.succeeded, now, false)
    }
  }
  return out
}

describe("circuit breakers on SQLite, across a restart", () => {
  it.effect(
    "a shared breaker opens, holds its tasks, probes after a growing cool-down and closes",
    () =>
      inFile((file) =>
        Effect.gen(function* () {
          const { runs, failing, handler } = mail()
          const options = {
            handlers: [handler],
            workers: 1,
            breakers: { smtp: { failures: 2, coolDown: 100, factor: 2, maxCoolDown: 300 } },
          }
          failing.add("a")
          yield* withScheduler(sqlite(file), options, (d) =>
            Effect.gen(function* () {
              const p = { handler, payload: {}, breaker: "smtp" }
              yield* d.schedule({ ...p, id: "a", schedule: Schedule.fixedRate(100) })
              yield* d.schedule({ ...p, id: "b", schedule: Schedule.once(250) })
              yield* advance(d, 100)
              // a@0 and a@100 failed: open at 100 until 200; a and the one-shot b are held.
              const open = Option.getOrThrow(yield* d.breaker("smtp"))
              expect([open.state, open.failures, open.opens, open.halfOpenAt]).toEqual([
                "open",
                2,
                1,
                200,
              ])
              expect(open.held).toEqual(["a", "b"])
              expect(Option.getOrThrow(yield* d.info("b")).pausedReason).toBe("breaker")
              yield* advance(d, 50)
            }),
          )
          // Another process (the same file) finds the breaker as it was left.
          yield* withScheduler(sqlite(file), options, (d) =>
            Effect.gen(function* () {
              const open = Option.getOrThrow(yield* d.breaker("smtp"))
              expect([open.state, open.held]).toEqual(["open", ["a", "b"]])
              // 200: half-open; a would run first (200 < b's 250): a is the probe, and fails.
              yield* advance(d, 50)
              const reopened = Option.getOrThrow(yield* d.breaker("smtp"))
              expect([reopened.state, reopened.opens, reopened.halfOpenAt]).toEqual([
                "open",
                2,
                400,
              ])
              failing.delete("a")
              // 400: half-open; b (due 250) would run before a (400): b probes, succeeds, and
              // the breaker closes and releases a at its first grid slot >= 400.
              yield* advance(d, 200)
              const closed = Option.getOrThrow(yield* d.breaker("smtp"))
              expect([closed.state, closed.failures, closed.opens, closed.held]).toEqual([
                "closed",
                0,
                0,
                [],
              ])
              expect(yield* d.status("b")).toBe("done")
              expect(yield* transitions(d, ["a", "b"])).toEqual([
                "smtp open@100 (a)",
                "smtp half-open@200 (a)",
                "smtp open@200 (a)",
                "smtp half-open@400 (b)",
                "smtp closed@400 (b)",
              ])
              const skipped = (yield* d.ledger("a")).flatMap((o) =>
                o.kind === "skipped" ? [[o.firstSlot, o.lastSlot, o.count, o.cause]] : [],
              )
              expect(skipped).toEqual([[300, 300, 1, "breaker"]])
            }),
          )
          // The held one-shot was not lost: it ran as the probe. The core kernel, given the same
          // tasks and outcomes, runs the same trace.
          expect(runs).toEqual(["a@0", "a@100", "a@200", "b@400", "a@400"])
          expect(runs).toEqual(kernelTrace([0, 100, 200, 400]))
        }),
      ),
  )

  it.effect("a task's own breaker is listed by its id and reopens on a failed probe", () =>
    inFile((file) =>
      Effect.gen(function* () {
        const { runs, failing, handler } = mail()
        failing.add("c")
        yield* withScheduler(sqlite(file), { handlers: [handler] }, (d) =>
          Effect.gen(function* () {
            yield* d.schedule({
              id: "c",
              handler,
              payload: {},
              schedule: Schedule.fixedRate(100),
              breaker: { failures: 1, coolDown: 150 },
            })
            yield* advance(d, 0)
            const own = Option.getOrThrow(yield* d.breaker("c"))
            expect([own.name, own.shared, own.state, own.halfOpenAt, own.held]).toEqual([
              "c",
              false,
              "open",
              150,
              ["c"],
            ])
            expect(Option.getOrThrow(yield* d.info("c")).breaker).toBe("c")
            expect((yield* d.breakers).map((b) => b.name)).toEqual(["c"])
            // 150: the probe is the held task itself, at its first grid slot >= 150 (200).
            yield* advance(d, 250)
            expect(Option.getOrThrow(yield* d.breaker("c")).opens).toBe(2)
            yield* d.cancel("c")
            expect(yield* d.breakers).toEqual([])
          }),
        )
        expect(runs).toEqual(["c@0", "c@200"])
      }),
    ),
  )

  it.effect("an update that takes a task out of an open breaker releases it", () =>
    inFile((file) =>
      Effect.gen(function* () {
        const { runs, failing, handler } = mail()
        failing.add("f")
        const options = {
          handlers: [handler],
          breakers: { smtp: { failures: 1, coolDown: "1 hour" as const } },
        }
        yield* withScheduler(sqlite(file), options, (d) =>
          Effect.gen(function* () {
            const p = { handler, payload: {}, breaker: "smtp" }
            yield* d.schedule({ ...p, id: "f", schedule: Schedule.once(0) })
            yield* d.schedule({ ...p, id: "g", schedule: Schedule.fixedRate(100, { delay: 50 }) })
            yield* advance(d, 10)
            expect(yield* d.status("g")).toBe("paused")
            // A task joining an open breaker is held at once.
            yield* d.schedule({ ...p, id: "h", schedule: Schedule.once(20) })
            expect(yield* d.status("h")).toBe("paused")
            expect(yield* d.update("g", { breaker: null })).toBe(true)
            expect(yield* d.status("g")).toBe("scheduled")
            yield* advance(d, 100)
            expect(Option.getOrThrow(yield* d.breaker("smtp")).held).toEqual(["h"])
          }),
        )
        // g, released at 10, runs at its held slot 50; h stays held with the breaker.
        expect(runs).toEqual(["f@0", "g@50"])
      }),
    ),
  )
})

describe("a held retry on SQLite", () => {
  it.effect("a retry pending when the breaker opens is held, not lost, and runs as the probe", () =>
    inFile((file) =>
      Effect.gen(function* () {
        const runs: Array<string> = []
        const handler = Handler.make("flaky", Schema.Struct({}), (_, run) =>
          Effect.suspend(() => {
            runs.push(`${run.id}#${run.attempt}@${run.startedAt}`)
            return run.id === "f" || run.attempt === 1 ? Effect.fail("down") : Effect.void
          }),
        )
        const options = { handlers: [handler], breakers: { smtp: { failures: 1, coolDown: 100 } } }
        yield* withScheduler(sqlite(file), options, (d) =>
          Effect.gen(function* () {
            const p = { handler, payload: {}, breaker: "smtp" }
            yield* d.schedule({
              ...p,
              id: "r",
              schedule: Schedule.once(0),
              retry: { maxRetries: 1, base: 50 },
            })
            yield* d.schedule({ ...p, id: "f", schedule: Schedule.once(10) })
            // r@0 failed with a retry due at 50 (its slot goes on); f@10 failed: open until 110.
            yield* advance(d, 20)
            const held = Option.getOrThrow(yield* d.info("r"))
            expect([held.state, held.pausedReason, held.attempt, held.scheduledFor]).toEqual([
              "paused",
              "breaker",
              2,
              50,
            ])
            yield* advance(d, 100)
            expect(yield* d.status("r")).toBe("done")
            expect(Option.getOrThrow(yield* d.breaker("smtp")).state).toBe("closed")
          }),
        )
        expect(runs).toEqual(["r#1@0", "f#1@10", "r#2@110"])
      }),
    ),
  )
})

describe("a probe that expires on SQLite", () => {
  it.effect("a one-shot probe past its deadline ends failed and another held task probes", () =>
    inFile((file) =>
      Effect.gen(function* () {
        const { runs, failing, handler } = mail()
        failing.add("f")
        const options = { handlers: [handler], breakers: { smtp: { failures: 1, coolDown: 100 } } }
        yield* withScheduler(sqlite(file), options, (d) =>
          Effect.gen(function* () {
            const p = { handler, payload: {}, breaker: "smtp" }
            yield* d.schedule({ ...p, id: "f", schedule: Schedule.once(0) })
            yield* d.schedule({ ...p, id: "w", schedule: Schedule.once(50), window: 20 })
            yield* d.schedule({ ...p, id: "x", schedule: Schedule.once(150) })
            // 100: half-open; w (due 50) would run first and probes, but its deadline was 70.
            yield* advance(d, 100)
            expect(yield* d.status("w")).toBe("failed")
            expect(Option.getOrThrow(yield* d.breaker("smtp")).probe).toBe("x")
            yield* advance(d, 100)
            expect(Option.getOrThrow(yield* d.breaker("smtp")).state).toBe("closed")
            expect(yield* d.status("x")).toBe("done")
          }),
        )
        expect(runs).toEqual(["f@0", "x@150"])
      }),
    ),
  )
})

describe("pauses by hand and breakers on SQLite", () => {
  it.effect("a held task paused by hand stays paused when the breaker closes", () =>
    inFile((file) =>
      Effect.gen(function* () {
        const { runs, failing, handler } = mail()
        failing.add("f")
        const options = {
          handlers: [handler],
          breakers: { smtp: { failures: 1, coolDown: 100 } },
        }
        yield* withScheduler(sqlite(file), options, (d) =>
          Effect.gen(function* () {
            const p = { handler, payload: {}, breaker: "smtp" }
            yield* d.schedule({ ...p, id: "f", schedule: Schedule.once(0) })
            yield* d.schedule({ ...p, id: "g", schedule: Schedule.fixedRate(100, { delay: 50 }) })
            yield* advance(d, 10)
            expect(Option.getOrThrow(yield* d.info("g")).pausedReason).toBe("breaker")
            // Already paused (by the breaker): false, as the kernel says, but now by hand.
            expect(yield* d.pause("g")).toBe(false)
            expect(Option.getOrThrow(yield* d.info("g")).pausedReason).toBe("manual")
            // 100: half-open with nothing held by it to probe; the next task to come probes.
            yield* advance(d, 100)
            const half = Option.getOrThrow(yield* d.breaker("smtp"))
            expect([half.state, half.probe]).toEqual(["half-open", undefined])
            yield* d.schedule({ ...p, id: "h", schedule: Schedule.once(40) })
            expect(Option.getOrThrow(yield* d.breaker("smtp")).probe).toBe("h")
            yield* advance(d, 100)
            expect(Option.getOrThrow(yield* d.breaker("smtp")).state).toBe("closed")
            expect(yield* d.status("g")).toBe("paused")
            expect(yield* d.resume("g")).toBe(true)
            yield* advance(d, 100)
          }),
        )
        expect(runs).toEqual(["f@0", "h@150", "g@250"])
      }),
    ),
  )
})
