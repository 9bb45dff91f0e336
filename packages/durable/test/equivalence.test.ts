/**
 * The durable scheduler decides nothing by itself: for random tasks (fixed rate, fixed delay,
 * one-shot; every missed-run policy; failures, retries, pausing; priorities) and random stretches
 * of running and of being down, its run trace on SQLite with one worker under TestClock equals
 * the core kernel's, stepped the same way (a restart is the kernel's clock jumping). Runs are
 * `FC_RUNS_DURABLE` (default 25).
 */
import { describe, expect, it } from "@effect/vitest"
import { Kernel, type MissedRun, Schedule, Task } from "@tickwork/core"
import { Effect, Schema } from "effect"
import { TestClock } from "effect/testing"
import * as fc from "fast-check"
import { Handler } from "../src/index.ts"
import { advance, sqlite, tempDir, withScheduler } from "./helpers.ts"

const RUNS = Number(process.env.FC_RUNS_DURABLE ?? 25)

interface Spec {
  readonly kind: "fixed-rate" | "fixed-delay" | "once"
  readonly period: number
  readonly delay: number
  readonly policy: MissedRun.MissedRunPolicy
  readonly priority: Task.Priority
  /** Attempts up to this fail. */
  readonly failUntil: number
  readonly maxRetries: number
  readonly base: number
  readonly pauseAfter: number
}

const spec: fc.Arbitrary<Spec> = fc.record({
  kind: fc.constantFrom("fixed-rate", "fixed-delay", "once"),
  period: fc.integer({ min: 40, max: 400 }),
  delay: fc.integer({ min: 0, max: 500 }),
  policy: fc.constantFrom("catch-up", "coalesce", "skip"),
  priority: fc.constantFrom("high", "normal", "low"),
  failUntil: fc.integer({ min: 0, max: 2 }),
  maxRetries: fc.integer({ min: 0, max: 2 }),
  base: fc.integer({ min: 5, max: 80 }),
  pauseAfter: fc.integer({ min: 0, max: 3 }),
})

const segment = fc.record({
  runFor: fc.integer({ min: 0, max: 1_500 }),
  downFor: fc.integer({ min: 0, max: 2_500 }),
})

const schedule = (s: Spec) =>
  s.kind === "fixed-rate"
    ? Schedule.fixedRate(s.period, { delay: s.delay })
    : s.kind === "fixed-delay"
      ? Schedule.fixedDelay(s.period, { delay: s.delay })
      : Schedule.once(s.delay)

const options = (s: Spec, k: number) => ({
  id: `t${k}`,
  schedule: schedule(s),
  priority: s.priority,
  missedRuns: s.policy,
  retry: { maxRetries: s.maxRetries, base: s.base },
  pauseAfterConsecutiveFailures: s.pauseAfter,
})

/** The kernel stepped like the core's driver: each run at its slot, a stretch down as one jump. */
const kernelTrace = (
  specs: ReadonlyArray<Spec>,
  segments: ReadonlyArray<{ runFor: number; downFor: number }>,
) => {
  const k = new Kernel.Kernel<number>()
  for (const [i, s] of specs.entries()) k.schedule({ ...options(s, i), job: s.failUntil }, 0)
  const trace: Array<string> = []
  let now = 0
  for (const { runFor, downFor } of segments) {
    const end = now + runFor
    for (let run = k.takeDue(now, end); run !== undefined; run = k.takeDue(now, end)) {
      now = run.startedAt
      trace.push(`${run.id}:${run.scheduledFor}#${run.attempt}@${run.startedAt}`)
      k.complete(run, run.attempt <= run.job ? Task.failed("boom") : Task.succeeded, now, false)
    }
    now = end + downFor
  }
  return { trace, states: specs.map((_, i) => k.status(`t${i}`)) }
}

describe("equivalence with the core kernel", () => {
  it.effect(
    "random tasks and restarts: the durable trace is the kernel's",
    () =>
      Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(
            fc.array(spec, { minLength: 1, maxLength: 5 }),
            fc.array(segment, { minLength: 1, maxLength: 3 }),
            (specs, segments) =>
              Effect.runPromise(
                Effect.gen(function* () {
                  const t = tempDir()
                  const trace: Array<string> = []
                  const handler = Handler.make(
                    "h",
                    Schema.Struct({ failUntil: Schema.Number }),
                    (p, run) =>
                      Effect.suspend(() => {
                        trace.push(`${run.id}:${run.scheduledFor}#${run.attempt}@${run.startedAt}`)
                        return run.attempt <= p.failUntil ? Effect.fail("boom") : Effect.void
                      }),
                  )
                  const store = sqlite(t.file())
                  const states: Array<string> = []
                  for (const [n, { runFor, downFor }] of segments.entries()) {
                    yield* withScheduler(store, { handlers: [handler], workers: 1 }, (d) =>
                      Effect.gen(function* () {
                        if (n === 0) {
                          for (const [i, s] of specs.entries()) {
                            yield* d.schedule({
                              ...options(s, i),
                              handler,
                              payload: { failUntil: s.failUntil },
                            })
                          }
                        }
                        yield* advance(d, runFor)
                        if (n === segments.length - 1) {
                          for (let i = 0; i < specs.length; i++)
                            states.push(yield* d.status(`t${i}`))
                        }
                      }),
                    )
                    yield* TestClock.adjust(downFor)
                  }
                  t.cleanup()
                  const expected = kernelTrace(specs, segments)
                  expect(trace).toEqual(expected.trace)
                  expect(states).toEqual(expected.states)
                }).pipe(Effect.provide(TestClock.layer())) as Effect.Effect<void, unknown>,
              ),
          ),
          { numRuns: RUNS },
        ),
      ),
    60_000 + RUNS * 1_000,
  )
})
